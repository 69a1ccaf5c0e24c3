// The fenced blocks of README.md and the guides (docs/*.md), read as a newcomer reads them, and run as a newcomer runs
// them: in order, each in its language, the shell's variables carried from block to block.
//
// A fence's info string is `<language> [name] [file=NAME] [folder] [background] [no-run: <reason>]`:
//   sh, bash, shell            runs in bash -euo pipefail from the repository's root (`folder`: from the reader's own
//                              folder, for commands of the reader's project); every command must succeed
//   js, ts, python, go         saved in the reader's folder (as NAME when given, which later blocks may import) and run
//                              with node, tsx, python3 or go run, the shell's variables in their environment
//   background                 keeps running (a receiver, a server) until its file's blocks are done; the next block
//                              starts once it printed what it states
//   no-run: <reason>           not run, for the reason given (a browser, a public URL, a server for another guide)
//   text, json, yaml, …        not code: what a command prints, or data a block quotes
// A line `# → text` (or `// → text`) in a block states what the block prints: its stdout must contain it,
// `…` standing for anything. Every URL of the service is written `$BASE/…` (`process.env.BASE` outside the shell);
// the test sets BASE to its own server on a random port.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO = new URL('../../', import.meta.url).pathname;

export type Language = 'sh' | 'js' | 'ts' | 'python' | 'go';

const LANGUAGES: Record<string, Language> = {
  sh: 'sh',
  bash: 'sh',
  shell: 'sh',
  js: 'js',
  javascript: 'js',
  ts: 'ts',
  typescript: 'ts',
  python: 'python',
  go: 'go',
};

/** How a saved block of each language runs, and the extension it is saved with. */
const RUNNERS: Record<Exclude<Language, 'sh'>, { extension: string; command: (file: string) => string[] }> = {
  js: { extension: 'mjs', command: (file) => [process.execPath, file] },
  ts: { extension: 'mts', command: (file) => [join(REPO, 'node_modules/.bin/tsx'), file] },
  python: { extension: 'py', command: (file) => ['python3', file] },
  // A guide's Go is a package to copy, not a program: vetting it compiles it.
  go: { extension: 'go', command: (file) => ['go', 'vet', file] },
};

export interface FencedBlock {
  file: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  info: string;
  code: string;
}

export interface GuideBlock extends FencedBlock {
  language: Language;
  /** The name after the language (`js verify-webhook`), by which a test can find the block. */
  name?: string;
  /** `file=NAME`: what the block is saved as in the reader's folder. */
  saveAs?: string;
  background: boolean;
  /** A shell block that runs in the reader's folder instead of the repository. */
  folder: boolean;
  /** Why the block is not run; undefined for a block that runs. */
  noRun?: string;
}

/**
 * README.md, then the guides in the order docs/index.md links them (a reader's order: getting started comes before
 * the features that change the demo student's plan), then any guide it does not link.
 */
export function documentedFiles(): string[] {
  const guides = readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md'));
  const index = readFileSync(join(REPO, 'docs/index.md'), 'utf8');
  const linked = [...index.matchAll(/\]\(([\w-]+\.md)\)/g)]
    .map((match) => match[1]!)
    .filter((name) => guides.includes(name));
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
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence!); j++)
      body.push(lines[j]!.slice(indent!.length));
    blocks.push({ file, line: i + 1, info: info!.trim(), code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The blocks of `file` written in a language the test runs (the rest is output or data), with their fence's marks. */
export function guideBlocks(file: string): GuideBlock[] {
  return fencedBlocks(file).flatMap((block) => {
    const noRunAt = block.info.search(/\bno-run\b/);
    const words = (noRunAt < 0 ? block.info : block.info.slice(0, noRunAt)).split(/\s+/).filter(Boolean);
    const language = LANGUAGES[words[0] ?? ''];
    if (!language) return [];
    const name = words.slice(1).find((word) => !word.includes('=') && word !== 'background' && word !== 'folder');
    const saveAs = words.find((word) => word.startsWith('file='))?.slice('file='.length);
    const noRun =
      noRunAt < 0
        ? undefined
        : block.info
            .slice(noRunAt)
            .replace(/^no-run:?\s*/, '')
            .trim();
    return [
      {
        ...block,
        language,
        background: words.includes('background'),
        folder: words.includes('folder'),
        ...(name ? { name } : {}),
        ...(saveAs ? { saveAs } : {}),
        ...(noRun !== undefined ? { noRun } : {}),
      },
    ];
  });
}

/** What a block states it prints: the text after `# → ` or `// → `, one entry per such line. */
export function statedOutputs(code: string): string[] {
  return [...code.matchAll(/^\s*(?:#|\/\/)\s*→\s*(.+)$/gm)].map((match) => match[1]!.trim());
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
  /** What the block printed on stdout: where a stated output must be (a terminal shows stderr too, a pipe does not). */
  stdout: string;
  /** stdout and stderr, for a failure's message. */
  output: string;
  /** The variables after the block, as `declare -p` lines to source before the next one. */
  state: string;
}

/** Where blocks run: the shell's variables so far, the reader's folder for saved code, the process environment. */
export interface ReaderContext {
  state: string;
  folder: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The bash script that runs `block` after `state`: a shell block itself, with its assignments reported on fd 3;
 * code in another language saved in the reader's folder and run there with the shell's variables exported.
 */
function script(block: GuideBlock, reader: ReaderContext): string {
  if (block.language === 'sh') {
    const names = assignedNames(block.code);
    return [
      'set -euo pipefail',
      reader.state,
      ...(block.folder ? [`cd '${reader.folder}'`] : []),
      block.code,
      'echo "__STATE__" >&3',
      ...names.map((name) => `declare -p ${name} >&3 2>/dev/null || true`),
    ].join('\n');
  }
  const runner = RUNNERS[block.language];
  const file = join(reader.folder, block.saveAs ?? `block-${block.line}.${runner.extension}`);
  writeFileSync(file, `${block.code}\n`, { mode: 0o600 });
  const command = runner
    .command(file)
    .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
    .join(' ');
  return ['set -euo pipefail', 'set -a', reader.state, 'set +a', `cd '${reader.folder}'`, `exec ${command}`].join('\n');
}

/** Runs one block to its end. */
export function runBlock(block: GuideBlock, reader: ReaderContext, timeoutMs: number): Promise<BlockRun> {
  return new Promise((resolve) => {
    const options = { cwd: REPO, env: reader.env, timeout: timeoutMs, maxBuffer: 16 << 20 };
    const child = execFile('bash', ['-c', `exec 3>&1; ${script(block, reader)}`], options, (error, stdout, stderr) => {
      const [output = '', after = ''] = stdout.split('__STATE__\n');
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({
        code,
        stdout: output,
        output: `${output}${stderr ? `\n[stderr]\n${stderr}` : ''}`,
        state: after ? `${reader.state}\n${after}` : reader.state,
      });
    });
    child.stdin?.end();
  });
}

export interface BackgroundBlock {
  child: ChildProcess;
  output(): string;
  /** Resolves once the output shows every stated line; rejects if the process ends first. */
  ready: Promise<void>;
}

/** Starts a `background` block; the caller stops it (SIGTERM) when its file's blocks are done. */
export function startBlock(block: GuideBlock, reader: ReaderContext): BackgroundBlock {
  const options = { cwd: REPO, env: reader.env, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] };
  const child = spawn('bash', ['-c', script(block, reader)], options);
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (statedOutputs(block.code).every((stated) => showsOutput(output, stated))) resolve();
    };
    child.stdout.on('data', (chunk) => ((output += chunk), check()));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`exited with ${code} before printing what it states:\n${output}`)));
  });
  return { child, output: () => output, ready };
}
