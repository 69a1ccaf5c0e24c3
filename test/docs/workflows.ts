// The readers' journeys of spec/workflows/ (Arazzo 1.0), run by Redocly's runner (`redocly respect`) against a live
// instance: the credentials each workflow takes as inputs made the way an operator and a student make them (the
// operator CLI, the consent page). One respect run takes several files, one after another, and reports each apart
// (--json-output): each run pays Node's and Redocly's start once, whatever the number of files.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { CLI } from '../support/run-node.ts';
import { REPO } from './guide-blocks.ts';

export const WORKFLOWS_DIR = 'spec/workflows';

const REDOCLY = `${REPO}node_modules/.bin/redocly`;
/** Plain output, no telemetry and no update check: a test's run talks to the instance only. */
const QUIET = { ...process.env, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

/** Every scope a personal key can hold (`users key` leaves out keys:manage unless asked). */
const ALL_SCOPES = [
  'profile:read profile:write keys:manage tasks:read tasks:write schedule:read decks:read decks:write',
  'exams:read exams:write today:read ai:chat webhooks:manage rooms:read rooms:write',
].join(' ');

export interface Run {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: REPO, env, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** The operator CLI against the instance's database: the lines of stdout (what it made comes last). */
export async function cliLines(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string[]> {
  const result = await new Promise<{ error: Error | null; stdout: string; stderr: string }>((resolve) => {
    const options = { cwd: REPO, env, timeout: 120_000 };
    execFile(process.execPath, [...CLI, ...args], options, (error, stdout, stderr) =>
      resolve({ error, stdout, stderr }),
    );
  });
  if (result.error) throw new Error(`cli ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout.trim().split('\n');
}

/** The last line of the CLI's stdout, where it prints the one secret or id it made. */
export async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  return (await cliLines(env, ...args)).at(-1)!;
}

export interface Student {
  email: string;
  password: string;
  key: string;
}

export async function newStudent(env: NodeJS.ProcessEnv, name: string): Promise<Student> {
  const nickname = `${name}_${randomBytes(4).toString('hex')}`;
  const email = `${nickname}@example.com`;
  const password = await cli(env, 'users', 'create', '--email', email, '--nickname', nickname);
  return { email, password, key: await cli(env, 'users', 'key', email, '--scopes', ALL_SCOPES) };
}

/**
 * What a student's browser does on the consent page: sign in and allow `clientId`, with a PKCE S256 challenge. The
 * code and its verifier, read from the redirect (the part of the journey Respect cannot drive: it follows redirects).
 */
export async function consent(base: string, student: Student, clientId: string, redirectUri: string, scope: string) {
  const verifier = randomBytes(48).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    state: 'workflow',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    email: student.email,
    password: student.password,
    decision: 'allow',
  });
  const signal = AbortSignal.timeout(30_000);
  const answer = await fetch(`${base}/oauth/authorize`, { method: 'POST', body: form, redirect: 'manual', signal });
  const code = new URL(answer.headers.get('location') ?? 'about:blank').searchParams.get('code');
  if (!code) throw new Error(`the consent page answered ${answer.status} without a code: ${await answer.text()}`);
  return { code, code_verifier: verifier };
}

export interface RespectOptions {
  /** Each source description's server: `general`, `partner`, `oauth` → the instance. */
  base: string;
  /** The inputs of every file of the run: a workflow takes those its inputs' schema names. */
  inputs: Record<string, string>;
  /** Workflows (by id, in any file of the run) not to run. */
  skip?: string[];
  severity?: Record<string, 'error' | 'warn' | 'off'>;
}

/** A workflow as Respect's JSON report has it. */
export interface ExecutedWorkflow {
  workflowId: string;
  /** `error` when a check of severity error failed; `warn` when only a check of severity warn did. */
  status: 'success' | 'warn' | 'error';
  executedSteps: Array<{ stepId: string; status: string; response: { body: unknown } }>;
}

export interface RespectRun extends Run {
  /** Each file's result, by the path the run was given it as. */
  files: Record<string, { executedWorkflows: ExecutedWorkflow[]; globalTimeoutError: boolean }>;
}

/** One `redocly respect` run of workflow files, in the order given, each file's result read from its JSON report. */
export async function respect(files: string[], options: RespectOptions, report: string): Promise<RespectRun> {
  const args = [
    'respect',
    ...files,
    '--server',
    ['general', 'partner', 'oauth'].map((name) => `${name}=${options.base}`).join(','),
    '--input',
    JSON.stringify(options.inputs),
    ...(options.skip ?? []).flatMap((workflow) => ['--skip', workflow]),
    ...(options.severity ? ['--severity', JSON.stringify(options.severity)] : []),
    '--json-output',
    report,
  ];
  rmSync(report, { force: true });
  const result = await run(REDOCLY, args, QUIET, 300_000);
  const json = existsSync(report) ? (JSON.parse(readFileSync(report, 'utf8')) as Pick<RespectRun, 'files'>) : undefined;
  return { ...result, files: json?.files ?? {} };
}

/** The ids of the workflows a file declares, in order (`file` from the repository's root, or absolute). */
export function workflowIds(file: string): string[] {
  const text = readFileSync(resolvePath(REPO, file), 'utf8');
  return [...text.matchAll(/^ {2}- workflowId: (\S+)$/gm)].map((match) => match[1]!);
}

/** `redocly lint` of workflow files (Arazzo's own rules). */
export function lintWorkflows(files: string[]): Promise<Run> {
  return run(REDOCLY, ['lint', ...files], QUIET, 300_000);
}
