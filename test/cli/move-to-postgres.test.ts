// db move-to-postgres as an operator runs it: an embedded deployment (npm start on a data directory, its secrets key
// in DATA_DIR's key file) used through its API, stopped, moved with the CLI into a throwaway database, then started on
// PostgreSQL with the SECRETS_KEY the command printed. The service must answer as before: the same bodies, the same
// keys and tokens accepted, the webhook delivery still pending and delivered from PostgreSQL. This is also the restore
// test of the embedded engine's data. It needs a PostgreSQL server: it runs in the PostgreSQL run of the suite. Each
// case is bounded step by step (test/support/step-bound.ts): a start, a stop, a CLI or tool run, a wait that ends.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { connect, type Db } from '../../db/connect.ts';
import { copyDatabase, tablesWithData } from '../../db/copy-database.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { insertAccount } from '../../db/queries/profile.ts';
import { countOwnedRooms, insertRoom } from '../../db/queries/rooms.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../db/throwaway-database.ts';
import { MAX_ROOMS_OWNED } from '../../domain/bounds.ts';
import { signIn, refresh, TEST_REDIRECT_URI } from '../support/oauth-flow.ts';
import { changesListed } from '../support/feed-horizon.ts';
import { CLI, RUN_BOUND_MS, runNode } from '../support/run-node.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { casesInSteps, PROCESS_STEP_BOUND_MS, stepEnded } from '../support/step-bound.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'svc_live_[0-9A-Za-z]{32}';
const it = casesInSteps(PROCESS_STEP_BOUND_MS);

function cli(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'SECRETS_KEY', 'JWT_PRIVATE_KEY', 'DEBUG']) delete merged[name];
  Object.assign(merged, env);
  return runNode([...CLI, ...args], root, merged);
}

/** A webhook receiver on loopback that fails until told to succeed, and counts what it was sent. */
async function receiver(): Promise<{ url: string; server: Server; succeed(): void; received: string[] }> {
  let status = 500;
  const received: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (status === 200) received.push(body);
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    server,
    succeed: () => (status = 200),
    received,
  };
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: RUN_BOUND_MS }, (error, _stdout, stderr) => {
      stepEnded();
      if (error) reject(new Error(`${command}: ${stderr || error.message}`));
      else resolve();
    });
  });
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) {
      stepEnded();
      return value;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a stopped copy of DATA_DIR (the embedded backup of docs/production.md)', function () {
  // The hooks' bound; the cases are bounded step by step.
  this.timeout(PROCESS_STEP_BOUND_MS);
  const dirs: string[] = [];
  before(function () {
    if (process.env.DATABASE_URL) this.skip(); // embedded only: it runs in the suite's embedded run
  });
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('restores the deployment: the same answers to the same key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sc-backup-'));
    const copy = `${dataDir}-copy`;
    dirs.push(dataDir, copy);
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      SECRETS_KEY: undefined,
      SHUTDOWN_DRAIN_SECONDS: '0',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    };
    const original = startServerProcess(env);
    const base = await original.listening;
    const personalKey = new RegExp(`personal API key[^\\n]*\\n\\s*(${KEY})`).exec(original.output())?.[1];
    assert.ok(personalKey, original.output());
    const headers = { 'X-Service-API-Key': personalKey, 'Content-Type': 'application/json' };
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then(async (res) => ({
        status: res.status,
        body: await res.json(),
      }));
    assert.equal(
      (await post('/api/tasks', { title: 'Backed up', due_at: '2031-03-01T09:00:00Z', course: null })).status,
      201,
    );
    const endpoint = await post('/api/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      event_types: ['task.created'],
    });
    assert.equal(endpoint.status, 201);
    const reads = ['/api/tasks', '/api/webhooks/endpoints', '/api/events'];
    const before = await Promise.all(
      reads.map((path) => fetch(`${base}${path}`, { headers }).then((res) => res.json())),
    );
    original.child.kill('SIGTERM');
    assert.equal(await original.exited, 0);

    cpSync(dataDir, copy, { recursive: true, preserveTimestamps: true });
    rmSync(dataDir, { recursive: true, force: true }); // the original is lost; the copy is all there is
    const restored = startServerProcess({ ...env, DATA_DIR: copy });
    const restoredBase = await restored.listening;
    const after = await Promise.all(
      reads.map((path) => fetch(`${restoredBase}${path}`, { headers }).then((res) => res.json())),
    );
    assert.deepEqual(JSON.parse(JSON.stringify(after).replaceAll(restoredBase, base)), before);
    restored.child.kill('SIGTERM');
    assert.equal(await restored.exited, 0);
  });
});

describe('db move-to-postgres', function () {
  this.timeout(PROCESS_STEP_BOUND_MS);
  const serverUrl = process.env.DATABASE_URL;
  let dataDir: string;
  let target: ThrowawayDatabase;
  const servers: ServerProcess[] = [];

  before(async function () {
    if (!serverUrl) this.skip(); // the move needs a PostgreSQL server: the suite's PostgreSQL run has one
    dataDir = mkdtempSync(join(tmpdir(), 'sc-move-'));
    target = await createThrowawayDatabase(serverUrl, 'move_test');
  });
  after(async () => {
    for (const server of servers) server.child.kill('SIGKILL');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await target?.drop();
  });

  function start(env: Record<string, string | undefined>): ServerProcess {
    // No Redis: both sides count limits in memory, so a limit's remaining count is no difference between them.
    const server = startServerProcess({
      REDIS_URL: undefined,
      SHUTDOWN_DRAIN_SECONDS: '0',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      ...env,
    });
    servers.push(server);
    return server;
  }

  async function stop(server: ServerProcess): Promise<void> {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output());
  }

  it('moves an account over a per-account bound as it is, and lists it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sc-over-'));
    const into = await createThrowawayDatabase(serverUrl!, 'move_test');
    try {
      const migrated = await cli(['migrate'], { DATA_DIR: dir });
      assert.equal(migrated.code, 0, migrated.stderr);
      // Written as no service path would: one room more than a student may own (an older version, psql).
      const embedded = connect({ dataDir: dir });
      const owned = MAX_ROOMS_OWNED + 1;
      let owner: string;
      try {
        const account = { email: 'over@example.com', nickname: 'over_bound', first_name: 'Over', password_hash: 'x' };
        owner = (await insertAccount(embedded, { ...account, time_zone: 'UTC', country_code: null })).id;
        const room = { course: null, created_by: owner };
        for (let i = 0; i < owned; i++) await insertRoom(embedded, { ...room, name: `Room ${i}` }, new Date());
      } finally {
        await embedded.destroy();
      }
      const moved = await cli(['db', 'move-to-postgres', '--to', into.url], { DATA_DIR: dir });
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(moved.stdout, /^moved as they are, over a per-account bound/m);
      const listed = `^  study rooms owned \\(bound ${MAX_ROOMS_OWNED}\\): ${owner} holds ${owned}$`;
      assert.match(moved.stdout, new RegExp(listed, 'm'));
      const copy = connect({ databaseUrl: into.url });
      try {
        assert.equal(await countOwnedRooms(copy, owner), owned, 'every room moved');
      } finally {
        await copy.destroy();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await into.drop();
    }
  });

  it('moves an embedded deployment that served real traffic; on PostgreSQL it answers as before', async () => {
    const hooks = await receiver();
    try {
      // The embedded deployment, as npm start makes it: no SECRETS_KEY, so its key file is made in DATA_DIR.
      const embedded = start({ DATA_DIR: dataDir, DATABASE_URL: undefined, SECRETS_KEY: undefined });
      const base = await embedded.listening;
      const output = embedded.output();
      const partnerKey = new RegExp(`demo partner key[^\\n]*\\n\\s*(${KEY})`).exec(output)?.[1];
      const personalKey = new RegExp(`personal API key[^\\n]*\\n\\s*(${KEY})`).exec(output)?.[1];
      const [, email, password] = /demo student (\S+), password (\S+)/.exec(output) ?? [];
      assert.ok(partnerKey && personalKey && email && password, output);
      const asStudent = { 'X-Service-API-Key': personalKey, 'Content-Type': 'application/json' };
      const call = async (
        method: string,
        path: string,
        body?: unknown,
        headers: Record<string, string> = asStudent,
      ) => {
        const res = await fetch(`${base}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      };
      const created = async (path: string, body: unknown) => {
        const res = await call('POST', path, body);
        assert.equal(res.status, 201, `${path}: ${JSON.stringify(res.body)}`);
        return res.body;
      };

      // A contract's limits: the test's polling stays clear of the free plan's 60 requests a minute.
      const plan = await cli(
        [
          'users',
          'plan',
          email,
          '--plan',
          'contract',
          '--per-minute',
          '6000',
          '--per-day',
          '100000',
          '--ai-per-hour',
          '10',
        ],
        { DATA_DIR: dataDir },
      );
      assert.equal(plan.code, 0, plan.stderr);

      // Activity through the API: a key, a webhook endpoint, tasks, a deck with cards and a review (xp).
      const key = (
        await created('/api/users/me/api-keys', { name: 'moved key', scopes: ['profile:read', 'tasks:read'] })
      ).key as string;
      const endpoint = await created('/api/webhooks/endpoints', { url: hooks.url, event_types: ['task.created'] });
      await created('/api/tasks', { title: 'Thesis chapter 2', due_at: '2031-03-01T09:00:00Z', course: 'Databases' });
      await created('/api/tasks', { title: 'Lab report', due_at: '2031-03-02T09:00:00Z', course: null });
      const deck = await created('/api/flashcards/decks', { title: 'Moved deck' });
      const card = await created(`/api/flashcards/decks/${deck.id}/cards`, {
        front: 'PGlite',
        back: 'PostgreSQL in WebAssembly',
      });
      await created(`/api/flashcards/decks/${deck.id}/cards`, { front: 'pg_dump', back: 'a logical backup' });
      await created(`/api/flashcards/cards/${card.id}/reviews`, { grade: 4 });
      // An OAuth grant: a public app registered with the CLI (through the running server), signed in with PKCE.
      const registered = await cli(
        [
          'clients',
          'create',
          '--name',
          'Moved app',
          '--redirect-uri',
          TEST_REDIRECT_URI,
          '--scopes',
          'profile:read tasks:read',
        ],
        { DATA_DIR: dataDir },
      );
      assert.equal(registered.code, 0, registered.stderr);
      const clientId = registered.stdout.trimEnd().split('\n').at(-1)!;
      const tokens = await signIn(base, { client_id: clientId, email, password, scope: 'profile:read tasks:read' });

      // Each task's delivery fails twice (first attempt, then the retry ~5 s later); the next retry is a minute away.
      const deliveries = `/api/webhooks/endpoints/${endpoint.id}/deliveries`;
      await until('two failed attempts', 30_000, async () => {
        const res = await call('GET', deliveries);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const list = res.body.data;
        return list.length === 2 && list.every((d: { attempts: number }) => d.attempts === 2) ? list : undefined;
      });

      // What the service answers, to the student, the key, the token and the partner.
      const asToken = { Authorization: `Bearer ${tokens.access_token}` };
      const reads: Array<[string, Record<string, string>]> = [
        ['/api/users/me', asStudent],
        ['/api/tasks', asStudent],
        ['/api/flashcards/decks', asStudent],
        [`/api/flashcards/decks/${deck.id}/cards`, asStudent],
        ['/api/webhooks/endpoints', asStudent],
        [deliveries, asStudent],
        ['/api/users/me/api-keys', asStudent],
        ['/api/users/me/authorizations', asStudent],
        ['/api/events', asStudent],
        ['/api/tasks', { 'X-Service-API-Key': key }],
        ['/api/users/me', asToken],
        ['/api/v1/universities?limit=5', { 'X-Service-API-Key': partnerKey }],
        ['/api/v1/leaderboards/global?limit=5', { 'X-Service-API-Key': partnerKey }],
        ['/api/v1/stats', { 'X-Service-API-Key': partnerKey }],
      ];
      const answers = async () =>
        Promise.all(reads.map(async ([path, headers]) => ({ path, ...(await call('GET', path, undefined, headers)) })));
      const before = await answers();
      for (const answer of before) assert.equal(answer.status, 200, `${answer.path}: ${JSON.stringify(answer.body)}`);
      const pending = before.find((a) => a.path === deliveries)!.body.data as Array<{ id: string; status: string }>;
      assert.deepEqual(
        pending.map((d) => d.status),
        ['pending', 'pending'],
      );

      // Not while the server runs on the directory: it would go on writing after the copy.
      const busy = await cli(['db', 'move-to-postgres', '--to', target.url], { DATA_DIR: dataDir });
      assert.equal(busy.code, 1, busy.stdout);
      assert.match(busy.stderr, /stop the server/);
      await stop(embedded);

      // A SECRETS_KEY other than the one that sealed the endpoint's secret is refused before anything is written.
      const wrongKey = await cli(['db', 'move-to-postgres', '--to', target.url], {
        DATA_DIR: dataDir,
        SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
      });
      assert.equal(wrongKey.code, 1, wrongKey.stdout);
      assert.match(wrongKey.stderr, /^error: SECRETS_KEY does not open the secrets stored in the embedded database/m);

      const moved = await cli(['db', 'move-to-postgres', '--to', target.url], { DATA_DIR: dataDir });
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(moved.stdout, /^moved \d+ rows in \d+ tables and 1 signing key to PostgreSQL at /m);
      const secretsKey = /^SECRETS_KEY=(\S+)$/.exec(moved.stdout.trimEnd().split('\n').at(-1)!)?.[1];
      assert.equal(
        secretsKey,
        readFileSync(join(dataDir, 'secrets.key'), 'utf8').trim(),
        'the key printed is the one of DATA_DIR',
      );
      const again = await cli(['db', 'move-to-postgres', '--to', target.url], { DATA_DIR: dataDir });
      assert.equal(again.code, 1);
      assert.match(again.stderr, /is not empty \(.*rows/);

      // The same service on PostgreSQL, with the key the command printed.
      const onPostgres = start({ DATABASE_URL: target.url, DATA_DIR: undefined, SECRETS_KEY: secretsKey });
      const movedBase = await onPostgres.listening;
      const origin = base;
      const asked = await Promise.all(
        reads.map(async ([path, headers]) => {
          const res = await fetch(`${movedBase}${path}`, { headers });
          return { path, status: res.status, body: JSON.parse(await res.text()) };
        }),
      );
      // Links in bodies name the base URL, the new process's port; a key's last_used_at moves with every request,
      // these reads included, and the partner's stats say when they were counted.
      const comparable = (answer: unknown, base: string) =>
        JSON.parse(JSON.stringify(answer).replaceAll(base, 'BASE'), (name, value) =>
          name === 'last_used_at' || name === 'generated_at' ? undefined : value,
        );
      for (const [i, answer] of asked.entries()) {
        assert.deepEqual(
          comparable(answer, movedBase),
          comparable(before[i], origin),
          `${answer.path} answers differently on PostgreSQL`,
        );
      }

      // The refresh token of the grant still refreshes, and a new write gets the next position of the changes feed.
      const refreshed = await refresh(movedBase, { client_id: clientId, refresh_token: tokens.refresh_token });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      const feed = before.find((a) => a.path === '/api/events')!.body;
      const next = await fetch(`${movedBase}/api/tasks`, {
        method: 'POST',
        headers: asStudent,
        body: JSON.stringify({ title: 'After the move', due_at: '2031-03-03T09:00:00Z', course: null }),
      });
      assert.equal(next.status, 201);
      // The feed lists the new event once every older transaction on the server has ended (feed-horizon.ts).
      const movedDb = connect({ databaseUrl: target.url });
      try {
        await changesListed(movedDb, before.find((a) => a.path === '/api/users/me')!.body.id);
      } finally {
        await movedDb.destroy();
      }
      const later = await fetch(`${movedBase}/api/events`, { headers: asStudent }).then((res) => res.json());
      assert.equal(later.data.length, feed.data.length + 1, 'the new event follows the moved ones');

      // The pending delivery goes on from PostgreSQL: its retry is delivered once the receiver accepts. The retry is
      // due about a minute after the second failure, which a loaded machine can spend on the stop, the move and the
      // reads above, its third attempt then failing too and the fourth minutes away: the retry is made due now, as
      // that minute passing would, so that what is waited on is the moved delivery's attempt and not the clock.
      hooks.succeed();
      const retried = connect({ databaseUrl: target.url });
      try {
        await retried
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: new Date() })
          .where(
            'id',
            'in',
            pending.map((d) => d.id),
          )
          .execute();
      } finally {
        await retried.destroy();
      }
      const delivered = await until('the moved deliveries to succeed', 120_000, async () => {
        const res = await fetch(`${movedBase}${deliveries}`, { headers: asStudent }).then((r) => r.json());
        const moved = res.data.filter((d: { id: string }) => pending.some((p) => p.id === d.id));
        return moved.length === 2 && moved.every((d: { status: string }) => d.status === 'succeeded')
          ? moved
          : undefined;
      });
      assert.ok(delivered.every((d: { attempts: number }) => d.attempts >= 3));
      assert.ok(
        hooks.received.some((body) => body.includes('Thesis chapter 2')),
        'the moved delivery is signed and sent as before',
      );

      // The PostgreSQL backup of the guide, restored: pg_dump while it serves, pg_restore into a new database.
      const served = await Promise.all(
        reads.map(([path, headers]) =>
          fetch(`${movedBase}${path}`, { headers }).then(async (res) => ({
            path,
            status: res.status,
            body: await res.json(),
          })),
        ),
      );
      const dump = join(dataDir, 'backup.dump');
      await run('pg_dump', ['-Fc', '-d', target.url, '-f', dump]);
      await stop(onPostgres);
      const restored = await createThrowawayDatabase(serverUrl!, 'move_test');
      try {
        await run('pg_restore', ['--no-owner', '--exit-on-error', '-d', restored.url, dump]);
        const onRestored = start({ DATABASE_URL: restored.url, DATA_DIR: undefined, SECRETS_KEY: secretsKey });
        const restoredBase = await onRestored.listening;
        for (const [i, [path, headers]] of reads.entries()) {
          const res = await fetch(`${restoredBase}${path}`, { headers });
          const answer = { path, status: res.status, body: await res.json() };
          assert.deepEqual(
            comparable(answer, restoredBase),
            comparable(served[i], movedBase),
            `${path} answers differently after pg_restore`,
          );
        }
        await stop(onRestored);
      } finally {
        await restored.drop();
      }
    } finally {
      hooks.server.close();
    }
  });

  it('writes nothing when the copy fails before its commit', async () => {
    const other = await createThrowawayDatabase(serverUrl!, 'move_test');
    const source = connect({ dataDir: 'memory://' });
    const destination: Db = connect({ databaseUrl: other.url });
    try {
      await migrateToLatest(source);
      await sql`insert into stat_counter_deltas (counter, delta) values ('users', 5)`.execute(source);
      await migrateToLatest(destination);
      await assert.rejects(
        copyDatabase(source, destination, {
          beforeCommit: async (trx) => {
            assert.equal(
              await sql<{ n: number }>`select count(*)::int as n from stat_counter_deltas where delta = 5`
                .execute(trx)
                .then((r) => r.rows[0]!.n),
              1,
              'the rows were in',
            );
            throw new Error('interrupted');
          },
        }),
        /interrupted/,
      );
      assert.deepEqual(await tablesWithData(destination), [], 'the target holds nothing');
      assert.equal(
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from pg_trigger where not tgenabled = 'O' and not tgisinternal`.execute(
            destination,
          )
        ).rows[0]!.n,
        0,
        'its triggers are on',
      );
    } finally {
      await Promise.all([source.destroy(), destination.destroy()]);
      await other.drop();
    }
  });
});
