// Every block the README and the guides show works as written on a fresh clone: the code blocks run in a reader's
// order (README.md, then the guides as docs/index.md lists them), each in its language, one shell's variables carried
// along, against a fresh instance (`npm start`'s entry on a new data directory and a random port), which stays up
// throughout: the operator CLI's blocks run through it, as they do for a reader whose server is running. The guides
// reach it through BASE, as getting-started.md tells a reader to set it, with the demo credentials its banner prints in
// PARTNER_KEY, STUDENT_KEY and STUDENT_PASSWORD, and WEBHOOK_ALLOW_PRIVATE_TARGETS=1 exported as docs/webhooks.md does
// for local receivers (whose port, RECEIVER_PORT, is random too).
// Blocks that cannot run say why in their fence (guide-blocks.ts); none is skipped silently.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import {
  documentedFiles,
  guideBlocks,
  REPO,
  runBlock,
  showsOutput,
  startBlock,
  statedOutputs,
  type BackgroundBlock,
  type GuideBlock,
  type ReaderContext,
} from './guide-blocks.ts';

// Generous for a shared machine: a block's time is the processes it starts (npm, the operator CLI's ~30 commands, the
// languages' runtimes), and it waits for little else.
const BLOCK_TIMEOUT_MS = 300_000;

/** Languages whose toolchain this machine lacks: their blocks are reported, not run. */
const missingToolchains = new Map(
  (['go', 'python3'] as const)
    .filter((tool) => spawnSync(tool, ['version'], { stdio: 'ignore' }).error)
    .map((tool) => [tool === 'python3' ? 'python' : tool, `${tool} is not installed here`]),
);

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

describe('blocks of the README and the guides, on a fresh instance', function () {
  this.timeout(900_000);
  const files = documentedFiles();
  const blocks = files.flatMap(guideBlocks);
  const dataDir = mkdtempSync(join(tmpdir(), 'guide-commands-'));
  let server: ServerProcess | undefined;
  /** The reader's shell (what one block assigns, the next sees, across files read in order) and folder. */
  const reader: ReaderContext = { state: '', folder: join(dataDir, 'reader'), env: {} };

  before(async () => {
    const port = await freePort();
    server = startServerProcess({
      DATA_DIR: join(dataDir, 'data'),
      PORT: String(port),
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      SECRETS_KEY: undefined,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    });
    const base = await server.listening;
    const output = server.output();
    const { DATABASE_URL: _db, REDIS_URL: _redis, SECRETS_KEY: _secrets, ...inherited } = process.env;
    reader.env = {
      ...inherited,
      BASE: base,
      DATA_DIR: join(dataDir, 'data'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      RECEIVER_PORT: String(await freePort()),
      PARTNER_KEY: banner(output, /demo partner key[^\n]*\n\s+(svc_live_\w+)/, 'demo partner key'),
      STUDENT_KEY: banner(output, /personal API key[^\n]*\n\s+(svc_live_\w+)/, "demo student's key"),
      STUDENT_PASSWORD: banner(output, /demo student \S+, password (\S+)/, "demo student's password"),
    };
    // The reader's own folder, beside a copy of the SDK as sdk.md has them import it.
    mkdirSync(reader.folder, { mode: 0o700 });
    symlinkSync(join(REPO, 'sdk'), join(reader.folder, 'sdk'));
  });
  const timings: [string, number][] = [];
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
    const skipped = blocks.filter((block) => block.noRun === undefined && missingToolchains.has(block.language));
    const run = blocks.length - notRun.length - skipped.length;
    const languages = [...new Set(blocks.map((block) => block.language))].map(
      (language) => `${blocks.filter((block) => block.language === language).length} ${language}`,
    );
    console.log(
      `      ${blocks.length} code blocks (${languages.join(', ')}) in ${files.length} files: ` +
        `${run} run, ${notRun.length} no-run, ${skipped.length} skipped here:`,
    );
    for (const block of notRun) console.log(`        no-run ${where(block)}: ${block.noRun}`);
    for (const block of skipped) {
      console.log(`        skipped ${where(block)}: ${missingToolchains.get(block.language)}`);
    }
    assert.ok(run >= 60, 'the guides show code that runs');
  });

  it('writes every address of the service as $BASE, so that the guides work on any port', () => {
    const fixed = blocks.filter(
      (block) => block.noRun === undefined && /(localhost|127\.0\.0\.1):3000/.test(block.code),
    );
    assert.deepEqual(fixed.map(where), [], 'these blocks name port 3000 instead of $BASE');
  });

  for (const file of files) {
    const runnable = guideBlocks(file).filter((block) => block.noRun === undefined);
    if (runnable.length === 0) continue;
    it(`${file}: ${runnable.length} block(s)`, async () => {
      const background: BackgroundBlock[] = [];
      try {
        for (const block of runnable) {
          if (missingToolchains.has(block.language)) continue; // listed as skipped above
          const started = performance.now();
          if (block.background) {
            const running = startBlock(block, reader);
            background.push(running);
            await running.ready;
            continue;
          }
          const run = await runBlock(block, reader, BLOCK_TIMEOUT_MS);
          timings.push([where(block), performance.now() - started]);
          const also = background.map((running) => `--- a background block's output ---\n${running.output()}`);
          const shown = `--- output ---\n${run.output}\n${also.join('\n')}`;
          assert.equal(run.code, 0, `${where(block)} failed (exit ${run.code}):\n${block.code}\n${shown}`);
          for (const stated of statedOutputs(block.code)) {
            assert.ok(
              showsOutput(run.stdout, stated),
              `${where(block)} does not print what it states: ${stated}\n${shown}`,
            );
          }
          reader.state = run.state;
        }
      } finally {
        for (const running of background) running.child.kill('SIGTERM');
      }
    });
  }
});

function where(block: GuideBlock): string {
  return `${block.file}:${block.line}`;
}
