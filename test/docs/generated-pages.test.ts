// The pages `npm run generate` writes from declarations in code are committed as they generate: a code or a variable
// added without running it fails here (and in CI's generate:check). .env.example is a working configuration: read as
// an env file, it is the defaults.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { CONFIG_VARIABLES } from '../../app/config-variables.ts';
import { loadConfig } from '../../app/config.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { PROBLEM_CODES } from '../../server/http/problem-codes.ts';
import { docsPages } from '../../scripts/generate/docs-pages.ts';

const root = new URL('../../', import.meta.url).pathname;
const pages = docsPages(bundledSpecs());

describe('generated pages', () => {
  for (const [file, content] of Object.entries(pages)) {
    it(`${file} is as npm run generate writes it`, () => {
      assert.ok(
        readFileSync(join(root, file), 'utf8') === content,
        `${file} is stale: run npm run generate and commit it`,
      );
    });
  }

  it('docs/errors.md lists every problem code with its status and title', () => {
    for (const [code, { status, title }] of Object.entries(PROBLEM_CODES)) {
      assert.ok(pages['docs/errors.md']!.includes(`| \`${code}\` | ${status} | ${title} |`), code);
    }
  });

  it('docs/configuration.md and .env.example list every declared variable', () => {
    for (const name of Object.keys(CONFIG_VARIABLES)) {
      assert.ok(pages['docs/configuration.md']!.includes(`| \`${name}\` |`), `${name} in docs/configuration.md`);
      assert.match(pages['.env.example']!, new RegExp(`^${name}=`, 'm'), `${name} in .env.example`);
    }
  });

  it('.env.example, read as an env file, is a valid configuration: the defaults', () => {
    const example = parseEnv(pages['.env.example']!);
    assert.deepEqual(Object.keys(example).sort(), Object.keys(CONFIG_VARIABLES).sort());
    assert.deepEqual(loadConfig(example), loadConfig({}));
  });
});
