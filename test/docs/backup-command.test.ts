// The embedded installation's backup in docs/production.md, run as printed (without the stop and start around it)
// with DATA_DIR unset, as a reader with the default `.data` has it: the copy must land outside the folder the command
// runs in (a repository would track it, secrets included) and keep the data directory's private modes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fencedBlocks } from './guide-blocks.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the backup command of docs/production.md', () => {
  const home = mkdtempSync(join(tmpdir(), 'backup-command-'));
  after(() => rmSync(home, { recursive: true, force: true }));

  it('copies the default .data outside the working folder, keeping 0700/0600, with DATA_DIR unset', () => {
    const block = fencedBlocks('docs/production.md').find((candidate) => candidate.code.includes('cp -a'));
    assert.ok(block, 'docs/production.md shows the backup command');
    const copy = block.code
      .split('\n')
      .filter((line) => !line.startsWith('systemctl'))
      .join('\n');
    const repository = join(home, 'checkout');
    mkdirSync(join(repository, '.data'), { recursive: true, mode: 0o700 });
    writeFileSync(join(repository, '.data/secrets.key'), 'secret', { mode: 0o600 });
    const { DATA_DIR: _unset, BACKUP_DIR: _default, ...env } = process.env;
    execFileSync('bash', ['-euo', 'pipefail', '-c', copy], { cwd: repository, env: { ...env, HOME: home } });
    assert.deepEqual(readdirSync(repository), ['.data'], 'nothing is written into the working folder');
    const backups = join(home, 'study-companion-backups');
    assert.equal(mode(backups), 0o700);
    const [copied] = readdirSync(backups);
    assert.match(copied!, /^data-\d{8}T\d{6}Z$/);
    assert.equal(mode(join(backups, copied!)), 0o700);
    assert.equal(mode(join(backups, copied!, 'secrets.key')), 0o600);
  });
});
