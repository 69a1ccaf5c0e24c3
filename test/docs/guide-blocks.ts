// The shell blocks of README.md and the guides (docs/*.md), read as a newcomer reads them, and run as a newcomer runs
// them: in order, one bash per block, each file's variables carried from block to block.
//
// A fence's info string decides what happens to a block:
//   ```sh                      runs; every command must succeed (bash -euo pipefail)
//   ```sh no-run: <reason>     not run, for the reason given (a browser, a public URL, a server that runs until stopped)
// A line `# → text` in a block states what the block prints: the block's output must contain it, `…` standing for
// anything. `localhost:3000` is the test's own server, on a free port.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO = new URL('../../', import.meta.url).pathname;

export interface ShellBlock {
  file: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  code: string;
  /** Why the block is not run; undefined for a block that runs. */
  noRun?: string;
}

export interface FencedBlock {
  file: string;
  line: number;
  info: string;
  code: string;
}

const SHELLS = new Set(['sh', 'bash', 'shell']);

/**
 * README.md, then the guides in the order docs/index.md links them (a reader's order: getting started comes before
 * the features that change the demo student's plan), then any guide it does not link.
 */
export function documentedFiles(): string[] {
  const guides = readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md'));
  const index = readFileSync(join(REPO, 'docs/index.md'), 'utf8');
  const linked = [...index.matchAll(/\]\(([\w-]+\.md)\)/g)].map((match) => match[1]!).filter((name) => guides.includes(name));
  const ordered = [...new Set(['index.md', ...linked, ...guides.sort()])];
  return ['README.md', ...ordered.map((name) => `docs/${name}`)];
}

export function fencedBlocks(file: string): FencedBlock[] {
  const lines = readFileSync(join(REPO, file), 'utf8').split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence!); j++) body.push(lines[j]!.slice(indent!.length));
    blocks.push({ file, line: i + 1, info: info!.trim(), code: body.join('\n') });
    i = j;
  }
  return blocks;
}

export function shellBlocks(file: string): ShellBlock[] {
  return fencedBlocks(file)
    .filter((block) => SHELLS.has(block.info.split(/\s+/)[0]!))
    .map(({ file, line, info, code }) => {
      const marker = /\bno-run\b:?\s*(.*)$/.exec(info);
      return { file, line, code, ...(marker ? { noRun: marker[1]!.trim() } : {}) };
    });
}

/** What a block states it prints: the text after `# → `, one entry per such line. */
export function statedOutputs(code: string): string[] {
  return [...code.matchAll(/^\s*#\s*→\s*(.+)$/gm)].map((match) => match[1]!.trim());
}

/** Whether `output` holds `stated`, where `…` stands for anything (the pieces appear in order). */
export function showsOutput(output: string, stated: string): boolean {
  let from = 0;
  for (const piece of stated.split('…').filter(Boolean)) {
    const at = output.indexOf(piece, from);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

/** Names a block assigns (`NAME=`, `export NAME=`, `read -r NAME`), so the next block of the file sees them. */
export function assignedNames(code: string): string[] {
  const names = new Set<string>();
  for (const match of code.matchAll(/(?:^|[\s;({])(?:export\s+)?([A-Z][A-Z0-9_]*)=/g)) names.add(match[1]!);
  for (const match of code.matchAll(/\bread\s+-r\s+([A-Z][A-Z0-9_]*)/g)) names.add(match[1]!);
  return [...names];
}

export interface BlockRun {
  code: number | null;
  output: string;
  /** The variables after the block, as `declare -p` lines to source before the next one. */
  state: string;
}

/** Runs one block in bash from the repository's root, after `state`, with `port` in place of 3000. */
export function runBlock(code: string, state: string, port: number, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<BlockRun> {
  const names = assignedNames(code);
  const script = [
    'set -euo pipefail',
    state,
    code.replaceAll('localhost:3000', `localhost:${port}`),
    'echo "__STATE__" >&3',
    ...names.map((name) => `declare -p ${name} >&3 2>/dev/null || true`),
  ].join('\n');
  return new Promise((resolve) => {
    const child = execFile('bash', ['-c', `exec 3>&1; ${script}`], { cwd: REPO, env, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const [output, after = ''] = stdout.split('__STATE__\n');
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, output: `${output}${stderr ? `\n[stderr]\n${stderr}` : ''}`, state: after ? `${state}\n${after}` : state });
    });
    child.stdin?.end();
  });
}
