// The readers' journeys in spec/workflows/ (Arazzo) run green with Redocly's runner against a fresh instance on a
// random port, on the engine of the run (embedded PGlite, or PostgreSQL and Redis when DATABASE_URL and REDIS_URL
// are set: `npm test` runs both in CI); `redocly lint` accepts them; and a journey broken on purpose (a field a later
// step reads, renamed) fails the run, so a green run means something.
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
  WORKFLOWS_DIR,
  type RespectOptions,
  type Run,
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
 * Respect's checks a file runs with, where one cannot run: the changes feed's schema does not compile in Respect's
 * Ajv (see offline-client.arazzo.yaml's description), so that file's schema checks are warnings.
 */
const SEVERITY: Record<string, RespectOptions['severity']> = { 'offline-client.arazzo.yaml': { SCHEMA_CHECK: 'warn' } };

const passed = (result: Run, file: string) => {
  assert.equal(result.code, 0, `respect failed on ${file}:\n${result.output}`);
  assert.match(result.output, /Workflows: \d+ passed, \d+ total/, result.output);
};

describe('the journeys of spec/workflows/ (Arazzo), run by redocly respect on a fresh instance', function () {
  this.timeout(900_000);
  const files = readdirSync(join(REPO, WORKFLOWS_DIR))
    .filter((name) => name.endsWith('.arazzo.yaml'))
    .sort();
  const dir = mkdtempSync(join(tmpdir(), 'workflows-'));
  let database: ThrowawayDatabase | undefined;
  let server: ServerProcess | undefined;
  let base: string;
  /** Each file's inputs, made before the runs. */
  const inputs: Record<string, Record<string, string>> = {};
  /**
   * The inputs a file needs fresh, made just before its run: a consent's authorization code lives 60 s, and the runs
   * before it (each a Redocly process) can take longer than that on a loaded machine.
   */
  const freshInputs: Record<string, () => Promise<Record<string, string>>> = {};
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
      'app.arazzo.yaml': () => consent(base, student, clientId, APP_REDIRECT, 'profile:read tasks:read tasks:write'),
      'institution.arazzo.yaml': () => consent(base, student, institutionId, INSTITUTION_REDIRECT, SCHOOL_SCOPES),
    });
    Object.assign(inputs, {
      'partner.arazzo.yaml': { partner_key: partnerKey, limited_key: limitedKey },
      'app.arazzo.yaml': {
        client_id: clientId,
        redirect_uri: APP_REDIRECT,
        student_key: student.key,
        webhook_url: 'http://127.0.0.1:9/hooks',
      },
      'offline-client.arazzo.yaml': { student_key: student.key },
      'study-session.arazzo.yaml': { student_key: learner.key },
      'study-room.arazzo.yaml': { owner_key: student.key, guest_key: guest.key },
      'institution.arazzo.yaml': {
        institution_id: institutionId,
        institution_secret: institutionSecret,
        redirect_uri: INSTITUTION_REDIRECT,
        stranger_id: randomUUID(),
      },
    });
  });

  after(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are valid Arazzo (redocly lint)', async () => {
    const result = await lintWorkflows(files.map((file) => `${WORKFLOWS_DIR}/${file}`));
    assert.equal(result.code, 0, result.output);
  });

  for (const file of files.filter((name) => name !== 'calendar-feed.arazzo.yaml')) {
    it(file, async () => {
      assert.ok(inputs[file], `${file} has inputs made for it here`);
      const fresh = (await freshInputs[file]?.()) ?? {};
      const options = { base, inputs: { ...inputs[file]!, ...fresh }, severity: SEVERITY[file] };
      const result = await respect(`${WORKFLOWS_DIR}/${file}`, options);
      passed(result, file);
    });
  }

  it('calendar-feed.arazzo.yaml: the second workflow reads and revokes the URL the first made', async () => {
    const file = `${WORKFLOWS_DIR}/calendar-feed.arazzo.yaml`;
    const report = join(dir, 'calendar.json');
    const create = { student_key: calendarKey };
    passed(await respect(file, { base, inputs: create, workflows: ['calendarFeedCreated'], jsonOutput: report }), file);
    type Step = { response: { body: { id: string; url: string } } };
    const [created] = JSON.parse(readFileSync(report, 'utf8')).files[file].executedWorkflows[0].executedSteps as Step[];
    const { id, url } = created!.response.body;
    const token = /\/api\/calendar\/(scf_\w+)\.ics$/.exec(url)?.[1];
    assert.ok(token, `the feed's URL carries its token: ${url}`);
    const read = { student_key: calendarKey, feed_id: id, token };
    passed(await respect(file, { base, inputs: read, workflows: ['calendarFeedReadAndRevoked'] }), file);
  });

  it('fails when a journey breaks: a renamed field that a later step reads', async () => {
    const broken = join(dir, 'broken-study-room.arazzo.yaml');
    const original = readFileSync(join(REPO, WORKFLOWS_DIR, 'study-room.arazzo.yaml'), 'utf8');
    // As if the room's answer called its id `room_id`: the join code's step reads it for its path.
    const planted = original
      .replace('room_id: $response.body#/id', 'room_id: $response.body#/room_id')
      .replaceAll('../../generated/', `${REPO}generated/`);
    assert.notEqual(planted, original);
    writeFileSync(broken, planted);
    const result = await respect(broken, { base, inputs: inputs['study-room.arazzo.yaml']! });
    assert.notEqual(result.code, 0, `respect passed a broken journey:\n${result.output}`);
    assert.match(result.output, /room_id/);
  });
});
