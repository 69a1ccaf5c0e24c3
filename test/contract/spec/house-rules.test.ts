// The house lint rules of redocly/house-rules.js, run by `npm run lint` on a scratch copy of the spec with one edit.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '../../support/run-node.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('house lint rules', function () {
  // One Redocly lint of the spec: fixed work (run-node.ts), given the run's bound and a margin.
  this.timeout(300_000);
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'house-rules-'));
    for (const entry of ['spec', 'redocly', 'redocly.yaml', '.redocly.lint-ignore.yaml'])
      cpSync(join(root, entry), join(scratch, entry), { recursive: true });
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('response-examples-paired fails a response example whose request example was renamed, naming both', async () => {
    const file = join(scratch, 'spec/general/paths/deck.yaml');
    const before = readFileSync(file, 'utf8');
    const after = before.replace(/^ {10}rename:$/m, '          renamed:');
    assert.notEqual(after, before, 'the scratch edit applies');
    writeFileSync(file, after);
    const lint = await runNode(
      [join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--format=stylish'],
      scratch,
    );
    assert.equal(lint.code, 1, lint.stdout + lint.stderr);
    assert.match(
      lint.stdout + lint.stderr,
      /house\/response-examples-paired +Response example `rename` \(200\) of updateDeck has no request example of the same name on the request body\./,
    );
    const problems = (lint.stdout + lint.stderr)
      .split('\n')
      .filter((line) => /^\s+\d+:\d+\s+(error|warning)\s/.test(line));
    assert.equal(problems.length, 1, `the edit breaks this rule only:\n${problems.join('\n')}`);
  });
});
