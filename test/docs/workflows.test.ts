// The readers' journeys in spec/workflows/ (Arazzo) run green with Redocly's runner against a fresh instance on a
// random port, on the engine of the run (embedded PGlite, or PostgreSQL and Redis when DATABASE_URL and REDIS_URL
// are set: `npm test` runs both in CI); `redocly lint` accepts them; and a journey broken on purpose (a field a later
// step reads, renamed) fails, so a green run means something. Files whose inputs agree run in one respect process
// (RUNS), each file judged on its own from the run's JSON report: every workflow it declares ran, none failed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../db/throwaway-database.ts';
import { startServerProcess, TEST_SECRETS_KEY, type ServerProcess } from '../support/server-process.ts';
import { REPO } from './guide-blocks.ts';
import {
  cli,
  cliLines,
  consent,
  lintWorkflows,
  newStudent,
  respect,
  workflowIds,
  WORKFLOWS_DIR,
  type RespectOptions,
  type RespectRun,
} from './workflows.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const APP_REDIRECT = 'http://localhost:8080/callback';
const INSTITUTION_REDIRECT = 'https://school42.example/consented';
const SCHOOL_SCOPES = 'profile:read tasks:read';

/**
 * The respect runs, each a process over the files listed, with one set of inputs (a workflow takes those its inputs'
 * schema names): files share a run when the inputs they both name have the same values. The app's and the
 * institution's consents each give their own `code`, and study-session wants a student with no study yet, so they run
 * apart; offline-client.arazzo.yaml runs alone, with Respect's schema checks as warnings (the changes feed's schema
 * does not compile in Respect's Ajv: see that file's description), which no other file is given. The calendar feed's
 * journey is two workflows: the first in the first run, the second, given what the first made, in the last. The
 * broken copy of study-room.arazzo.yaml (below) runs in the institution's run.
 */
const RUNS = {
  first: {
    files: ['app.arazzo.yaml', 'partner.arazzo.yaml', 'study-room.arazzo.yaml', 'calendar-feed.arazzo.yaml'],
    skip: ['calendarFeedReadAndRevoked'],
  },
  institution: { files: ['institution.arazzo.yaml', 'study-session.arazzo.yaml'] },
  offline: { files: ['offline-client.arazzo.yaml'], severity: { SCHEMA_CHECK: 'warn' } },
  last: { files: ['calendar-feed.arazzo.yaml'], skip: ['calendarFeedCreated'] },
} satisfies Record<string, Omit<RespectOptions, 'base' | 'inputs'> & { files: string[] }>;
type RunName = keyof typeof RUNS;

/** Asserts that `file` ran in `run`, every workflow it declares but `skipped`, and that none of them failed. */
function passed(run: RespectRun, file: string, skipped: string[] = []) {
  const result = run.files[file];
  assert.ok(result, `respect reported nothing of ${file}:\n${run.output}`);
  assert.equal(result.globalTimeoutError, false, `respect ran out of time on ${file}:\n${run.output}`);
  assert.deepEqual(
    result.executedWorkflows.map((workflow) => workflow.workflowId),
    workflowIds(file).filter((id) => !skipped.includes(id)),
    `the workflows respect ran of ${file}:\n${run.output}`,
  );
  const failed = result.executedWorkflows.filter((workflow) => workflow.status === 'error');
  assert.deepEqual(
    failed.map((workflow) => workflow.workflowId),
    [],
    `respect failed on ${file}:\n${run.output}`,
  );
}

describe('the journeys of spec/workflows/ (Arazzo), run by redocly respect on a fresh instance', function () {
  this.timeout(900_000);
  const files = readdirSync(join(REPO, WORKFLOWS_DIR))
    .filter((name) => name.endsWith('.arazzo.yaml'))
    .sort();
  const dir = mkdtempSync(join(tmpdir(), 'workflows-'));
  let database: ThrowawayDatabase | undefined;
  let server: ServerProcess | undefined;
  let base: string;
  /** Each run's inputs, made before the runs. */
  const inputs = {} as Record<RunName, Record<string, string>>;
  /**
   * The inputs a run needs fresh, made just before it: a consent's authorization code lives 60 s, and the runs before
   * it can take longer than that on a loaded machine (its file is the run's first).
   */
  const freshInputs: Partial<Record<RunName, () => Promise<Record<string, string>>>> = {};
  /** Each run, started by the first test that needs it. */
  const runs = new Map<RunName, Promise<RespectRun>>();
  const runOf = (name: RunName) => {
    if (!runs.has(name)) {
      const started = (async () => {
        const { files: runFiles, ...options } = RUNS[name];
        const fresh = (await freshInputs[name]?.()) ?? {};
        const paths = [...runFiles.map((file) => `${WORKFLOWS_DIR}/${file}`), ...(extraFiles[name] ?? [])];
        return respect(paths, { base, inputs: { ...inputs[name], ...fresh }, ...options }, join(dir, `${name}.json`));
      })();
      runs.set(name, started);
    }
    return runs.get(name)!;
  };
  /** study-room.arazzo.yaml as if the room's answer called its id `room_id`: the join code's step reads it for its path. */
  const broken = join(dir, 'broken-study-room.arazzo.yaml');
  const extraFiles: Partial<Record<RunName, string[]>> = { institution: [broken] };
  let calendarKey: string;

  before(async () => {
    const port = await freePort();
    const postgres = process.env.DATABASE_URL;
    database = postgres ? await createThrowawayDatabase(postgres, 'sc_workflows') : undefined;
    const engine = database
      ? { DATABASE_URL: database.url, DATA_DIR: undefined }
      : { DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: join(dir, 'data') };
    server = startServerProcess({ ...engine, PORT: String(port), WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' });
    base = await server.listening;
    // The CLI as an operator runs it beside this server: its database, and on PostgreSQL its SECRETS_KEY.
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', SECRETS_KEY: TEST_SECRETS_KEY };
    for (const [name, value] of Object.entries(engine)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    const [partnerKey, limitedKey, student, learner, guest] = [
      await cli(env, 'keys', 'create', '--name', 'workflows'),
      await cli(env, 'keys', 'create', '--name', 'workflows-limited', '--per-minute', '2'),
      await newStudent(env, 'wf'),
      await newStudent(env, 'learner'),
      await newStudent(env, 'guest'),
    ];
    const clientId = await cli(env, 'clients', 'create', '--name', 'Workflow app', '--redirect-uri', APP_REDIRECT);
    const institution = ['--name', 'School', '--redirect-uri', INSTITUTION_REDIRECT, '--scopes', SCHOOL_SCOPES];
    const made = await cliLines(env, 'institutions', 'create', ...institution);
    const [institutionId, institutionSecret] = made.slice(-2) as [string, string];
    calendarKey = student.key;
    Object.assign(freshInputs, {
      first: () => consent(base, student, clientId, APP_REDIRECT, 'profile:read tasks:read tasks:write'),
      institution: () => consent(base, student, institutionId, INSTITUTION_REDIRECT, SCHOOL_SCOPES),
    });
    Object.assign(inputs, {
      first: {
        // partner.arazzo.yaml
        partner_key: partnerKey,
        limited_key: limitedKey,
        // app.arazzo.yaml
        client_id: clientId,
        redirect_uri: APP_REDIRECT,
        student_key: student.key,
        webhook_url: 'http://127.0.0.1:9/hooks',
        // study-room.arazzo.yaml (and calendar-feed.arazzo.yaml's first workflow: student_key)
        owner_key: student.key,
        guest_key: guest.key,
      },
      institution: {
        institution_id: institutionId,
        institution_secret: institutionSecret,
        redirect_uri: INSTITUTION_REDIRECT,
        stranger_id: randomUUID(),
        // study-session.arazzo.yaml
        student_key: learner.key,
        // the broken copy of study-room.arazzo.yaml
        owner_key: student.key,
        guest_key: guest.key,
      },
      offline: { student_key: student.key },
      // calendar-feed.arazzo.yaml's second workflow; the feed's id and token are added by its test
      last: { student_key: calendarKey },
    });
    const original = readFileSync(join(REPO, WORKFLOWS_DIR, 'study-room.arazzo.yaml'), 'utf8');
    const planted = original
      .replace('room_id: $response.body#/id', 'room_id: $response.body#/room_id')
      .replaceAll('../../generated/', `${REPO}generated/`);
    assert.notEqual(planted, original);
    writeFileSync(broken, planted);
  });

  after(async () => {
    if (server) {
      // SIGINT, as at a terminal: the stop drains until no connection is left (SIGTERM drains its whole period).
      server.child.kill('SIGINT');
      assert.equal(await server.exited, 0, `the server did not stop cleanly:\n${server.output()}`);
    }
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are valid Arazzo (redocly lint)', async () => {
    const result = await lintWorkflows(files.map((file) => `${WORKFLOWS_DIR}/${file}`));
    assert.equal(result.code, 0, result.output);
  });

  it('run every file, each in a run with its inputs', () => {
    const inRuns = new Set(Object.values(RUNS).flatMap((run) => run.files));
    assert.deepEqual(
      files.filter((file) => !inRuns.has(file)),
      [],
      'files no run takes (RUNS): give them inputs here',
    );
  });

  for (const [name, { files: runFiles }] of Object.entries(RUNS) as [RunName, { files: string[] }][]) {
    for (const file of runFiles.filter((file) => file !== 'calendar-feed.arazzo.yaml')) {
      it(file, async () => passed(await runOf(name), `${WORKFLOWS_DIR}/${file}`));
    }
  }

  it('calendar-feed.arazzo.yaml: the second workflow reads and revokes the URL the first made', async () => {
    const file = `${WORKFLOWS_DIR}/calendar-feed.arazzo.yaml`;
    const first = await runOf('first');
    passed(first, file, RUNS.first.skip);
    const [created] = first.files[file]!.executedWorkflows[0]!.executedSteps;
    const { id, url } = created!.response.body as { id: string; url: string };
    const token = /\/api\/calendar\/(scf_\w+)\.ics$/.exec(url)?.[1];
    assert.ok(token, `the feed's URL carries its token: ${url}`);
    Object.assign(inputs.last, { feed_id: id, token });
    passed(await runOf('last'), file, RUNS.last.skip);
  });

  it('fails when a journey breaks: a renamed field that a later step reads', async () => {
    const run = await runOf('institution');
    assert.notEqual(run.code, 0, `respect passed a broken journey:\n${run.output}`);
    const result = run.files[broken];
    assert.ok(result, `respect reported nothing of the broken journey:\n${run.output}`);
    assert.deepEqual(
      result.executedWorkflows.map((workflow) => workflow.status),
      ['error'],
      `the broken journey fails:\n${run.output}`,
    );
    assert.match(JSON.stringify(result), /room_id/);
  });
});
