// Every command the README and the guides show works as written on a fresh clone: the shell blocks run in a reader's
// order (README.md, then the guides as docs/index.md lists them), one shell's variables carried along, against a
// fresh instance (`npm start`'s entry on a new data directory and a free port), which stays up throughout: the
// operator CLI's blocks run through it, as they do for a reader whose server is running. The demo credentials its banner
// prints go in PARTNER_KEY, STUDENT_KEY and STUDENT_PASSWORD, as getting-started.md tells a reader to set them, and
// WEBHOOK_ALLOW_PRIVATE_TARGETS=1 exported as docs/webhooks.md does for local receivers.
// Blocks that cannot run say why in their fence (guide-blocks.ts); none is skipped silently.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { documentedFiles, runBlock, shellBlocks, showsOutput, statedOutputs, type ShellBlock } from './guide-blocks.ts';

// Generous for a shared machine: the whole file costs about 95 s of CPU, half of it the operator CLI's own start-up
// (about 1.7 s a command, 30 commands), and a block waits for little else.
const BLOCK_TIMEOUT_MS = 300_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const banner = (output: string, pattern: RegExp, what: string) => {
  const match = pattern.exec(output);
  assert.ok(match, `the start-up banner names no ${what}:\n${output}`);
  return match[1]!;
};

describe('commands of the README and the guides, on a fresh instance', function () {
  this.timeout(900_000);
  const files = documentedFiles();
  const blocks = files.flatMap(shellBlocks);
  const dataDir = mkdtempSync(join(tmpdir(), 'guide-commands-'));
  let port: number;
  let server: ServerProcess | undefined;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    port = await freePort();
    server = startServerProcess({ DATA_DIR: join(dataDir, 'data'), PORT: String(port), DATABASE_URL: undefined, REDIS_URL: undefined, SECRETS_KEY: undefined, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' });
    await server.listening;
    const output = server.output();
    const { DATABASE_URL: _db, REDIS_URL: _redis, SECRETS_KEY: _secrets, ...inherited } = process.env;
    env = {
      ...inherited,
      DATA_DIR: join(dataDir, 'data'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      PARTNER_KEY: banner(output, /demo partner key[^\n]*\n\s+(svc_live_\w+)/, 'demo partner key'),
      STUDENT_KEY: banner(output, /personal API key[^\n]*\n\s+(svc_live_\w+)/, "demo student's key"),
      STUDENT_PASSWORD: banner(output, /demo student \S+, password (\S+)/, "demo student's password"),
    };
  });
  const timings: [string, number][] = [];
  /** The reader's shell: what one block assigns, the next sees, across files read in order. */
  let state = '';
  after(async () => {
    const slowest = timings.sort((a, b) => b[1] - a[1]).slice(0, 5);
    console.log(`      slowest blocks: ${slowest.map(([at, ms]) => `${at} ${(ms / 1000).toFixed(1)} s`).join(', ')}`);
    if (server) {
      server.child.kill('SIGINT');
      assert.equal(await server.exited, 0, `the server did not stop cleanly:\n${server.output()}`);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('marks every block it does not run, with a reason, and runs the rest', () => {
    const unexplained = blocks.filter((block) => block.noRun === '');
    assert.deepEqual(unexplained.map(where), [], 'a no-run block must say why');
    const notRun = blocks.filter((block) => block.noRun !== undefined);
    console.log(`      ${blocks.length} shell blocks in ${files.length} files: ${blocks.length - notRun.length} run, ${notRun.length} not run:`);
    for (const block of notRun) console.log(`        ${where(block)}: ${block.noRun}`);
    assert.ok(blocks.length - notRun.length >= 20, 'the guides show commands that run');
  });

  for (const file of files) {
    const runnable = shellBlocks(file).filter((block) => block.noRun === undefined);
    if (runnable.length === 0) continue;
    it(`${file}: ${runnable.length} block(s)`, async () => {
      for (const block of runnable) {
        const started = performance.now();
        const run = await runBlock(block.code, state, port, env, BLOCK_TIMEOUT_MS);
        timings.push([where(block), performance.now() - started]);
        assert.equal(run.code, 0, `${where(block)} failed (exit ${run.code}):\n${block.code}\n--- output ---\n${run.output}`);
        for (const stated of statedOutputs(block.code)) {
          assert.ok(showsOutput(run.output, stated), `${where(block)} does not print what it states: ${stated}\n--- output ---\n${run.output}`);
        }
        state = run.state;
      }
    });
  }
});

function where(block: ShellBlock): string {
  return `${block.file}:${block.line}`;
}
