// The account export: every record of the student in one JSON document, checked against the spec by the contract
// client; nothing of another student and no secret in it; written as it is read (the first bytes leave before the last
// section is read); a client that disconnects or a database that fails mid-stream ends the export, logged, with no
// connection or transaction left behind.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import pg from 'pg';
import { ALL_SCOPES } from '../../../server/auth/scopes.ts';
import { warnStudent } from '../../../services/accounts/warnings.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { addManyTasks, eventually, exportLeasesOf } from '../../support/export-account.ts';
import { listen, type Listening } from '../../support/listening.ts';
import { testDatabase } from '../../support/shared-database.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;

const PATH = '/api/users/me/export';
const onPostgres = Boolean(process.env.DATABASE_URL);

/** Tasks with 4 KB of notes each: ~10 MB of document, more than the loopback socket buffers of a client that stops
 * reading can hold, so the server is held at its writes before it reaches the last sections. */
const MANY_TASKS = 2500;

/** A GET of the export over the network that stops reading after the first chunk, until told to go on. */
function pausedExport(server: Listening, student: Student) {
  return new Promise<{
    res: http.IncomingMessage;
    first: string;
    rest: () => Promise<{ body: string; complete: boolean }>;
  }>((resolve, reject) => {
    const req = http.get(`${server.baseUrl}${PATH}`, { headers: student.headers }, (res) => {
      res.setEncoding('utf8');
      res.once('data', (first: string) => {
        res.pause();
        const rest = () =>
          new Promise<{ body: string; complete: boolean }>((done) => {
            let body = first;
            res.on('data', (chunk: string) => (body += chunk));
            // A connection the server ends abnormally: 'aborted' (and an 'error') instead of a complete message.
            res.once('close', () => done({ body, complete: res.complete }));
            res.on('error', () => {});
            res.resume();
          });
        resolve({ res, first, rest });
      });
    });
    req.on('error', reject);
  });
}

/**
 * The sessions of this test database waiting inside an export's snapshot: in a transaction that has read `tasks` (the
 * lock lasts until the transaction ends, whatever statement the session ran last), and idle there (waiting for its
 * client to read) or waiting for a lock another session holds.
 */
async function exportSessions(ctx: Ctx, which: 'in snapshot' | 'waiting on a lock' = 'in snapshot'): Promise<number[]> {
  const waiting =
    which === 'waiting on a lock'
      ? sql`a.wait_event_type = 'Lock'`
      : sql`(a.state like 'idle in transaction%' or a.wait_event_type = 'Lock')`;
  const { rows } = await sql<{
    pid: number;
  }>`select distinct a.pid from pg_stat_activity a join pg_locks l on l.pid = a.pid
    join pg_class c on c.oid = l.relation
    where a.datname = current_database() and ${waiting} and c.relname = 'tasks' and a.pid <> pg_backend_pid()`.execute(
    ctx.db,
  );
  return rows.map((r) => r.pid);
}

async function terminateSession(ctx: Ctx, pid: number): Promise<boolean> {
  return (await sql<{ ok: boolean }>`select pg_terminate_backend(${pid}) as ok`.execute(ctx.db)).rows[0]!.ok;
}

describe('exportMyAccount', () => {
  let ctx: Ctx;
  before(async () => {
    ctx = await generalApp({ allowPrivateWebhookTargets: true });
  });

  it('returns every record of the student as one document valid by the spec, nothing of another student and no secret', async () => {
    const alice = await ctx.newStudent();
    const bob = await ctx.newStudent();
    const { api, db } = ctx;
    const due = new Date(Date.now() + 86_400_000).toISOString();

    const series = (
      await api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'Weekly essay', due_at: due, course: 'History', recurrence: 'FREQ=WEEKLY' })
        .expect(201)
    ).body;
    await api.patch(`/api/tasks/${series.id}`).set(alice.headers).send({ status: 'completed' }).expect(200);
    const deck = (await api.post('/api/flashcards/decks').set(alice.headers).send({ title: 'Anatomy' }).expect(201))
      .body;
    const card = (
      await api
        .post(`/api/flashcards/decks/${deck.id}/cards`)
        .set(alice.headers)
        .send({ front: 'Femur', back: 'Thigh bone' })
        .expect(201)
    ).body;
    await api.post(`/api/flashcards/cards/${card.id}/reviews`).set(alice.headers).send({ grade: 4 }).expect(201);
    const exam = (
      await api
        .post('/api/exams')
        .set(alice.headers)
        .send({ subject: 'Anatomy', exam_date: due.slice(0, 10), deck_ids: [deck.id], task_ids: [series.id] })
        .expect(201)
    ).body;
    await api.post('/api/ai/chat').set(alice.headers).send({ message: 'What is the femur?' }).expect(200);
    const endpoint = (
      await api
        .post('/api/webhooks/endpoints')
        .set(alice.headers)
        .send({ url: 'http://127.0.0.1:9/hooks', event_types: ['task.created'] })
        .expect(201)
    ).body;
    const key = (
      await api
        .post('/api/users/me/api-keys')
        .set(alice.headers)
        .send({ name: 'scripts', scopes: ['tasks:read'] })
        .expect(201)
    ).body;
    const feed = (
      await api
        .post('/api/users/me/calendar-feeds')
        .set(alice.headers)
        .send({ name: 'phone', kinds: ['exams'], course: 'Biology', reminders: [{ minutes_before: 30 }] })
        .expect(201)
    ).body;
    await warnStudent(db, alice.id, 'Too many requests to the tutor.', new Date());
    const payment = `evt_${randomUUID()}`;
    await db
      .insertInto('payments')
      .values({
        user_id: alice.id,
        plan: 'plus',
        amount: 4900,
        currency: 'KZT',
        provider: 'manual',
        provider_event_id: payment,
        paid_at: new Date(),
      })
      .execute();
    const room = (
      await db
        .insertInto('study_rooms')
        .values({ name: 'Anatomy group', created_by: alice.id })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const clientSecretHash = `hash_${randomUUID()}`;
    const clientId = `client_${randomUUID().slice(0, 8)}`;
    await db
      .insertInto('oauth_clients')
      .values({
        id: clientId,
        name: 'Sync',
        secret_hash: clientSecretHash,
        redirect_uris: [],
        grants: ['client_credentials'],
        scopes: ['tasks:read'],
        owner_user_id: alice.id,
      })
      .execute();
    const bobsTask = (
      await api
        .post('/api/tasks')
        .set(bob.headers)
        .send({ title: `bob-only ${randomUUID()}`, due_at: due, course: null })
        .expect(201)
    ).body;

    const res = await api.get(PATH).set(alice.headers).expect(200);
    assert.equal(
      res.headers['content-disposition'],
      `attachment; filename="study-companion-export-${new Date().toISOString().slice(0, 10)}.json"`,
    );
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['transfer-encoding'], 'chunked', 'written as it is read, not sent with a length');
    const doc = res.body;
    const ids = (name: string, key = 'id') => doc[name].map((row: Record<string, unknown>) => row[key]);

    assert.equal(doc.format_version, '1');
    assert.equal(doc.user.id, alice.id);
    assert.equal(doc.user.email, alice.email);
    assert.equal(doc.user.warnings.length, 1);
    assert.equal(doc.tasks.length, 2, 'the completed occurrence and the next one');
    const [first, next] = [
      doc.tasks.find((t: { id: string }) => t.id === series.id),
      doc.tasks.find((t: { id: string }) => t.id !== series.id),
    ];
    assert.equal(first.status, 'completed');
    assert.ok(first.completed_at);
    assert.equal(first.recurrence, 'FREQ=WEEKLY');
    assert.equal(next.previous_id, series.id);
    assert.deepEqual(
      doc.exams.map((e: { id: string; deck_ids: string[]; task_ids: string[] }) => [e.id, e.deck_ids, e.task_ids]),
      [[exam.id, [deck.id], [series.id]]],
    );
    assert.deepEqual(ids('readiness', 'exam_id'), [exam.id]);
    assert.deepEqual(ids('flashcard_decks'), [deck.id]);
    assert.deepEqual(ids('flashcard_cards'), [card.id]);
    assert.deepEqual(
      doc.flashcard_reviews.map((r: { card_id: string; grade: number }) => [r.card_id, r.grade]),
      [[card.id, 4]],
    );
    const sources = new Set(doc.xp_awards.map((a: { source: string }) => a.source));
    assert.ok(
      sources.has('review') && sources.has('task'),
      `xp awards of the review and the task on time: ${[...sources]}`,
    );
    assert.equal(doc.ai_conversations.length, 1);
    assert.deepEqual(doc.ai_messages.map((m: { role: string }) => m.role).sort(), ['assistant', 'user']);
    assert.deepEqual(ids('webhook_endpoints'), [endpoint.id]);
    assert.deepEqual(ids('personal_api_keys'), [key.id]);
    assert.deepEqual(ids('calendar_feeds'), [feed.id]);
    const { kinds, course, reminders, include_notes } = doc.calendar_feeds[0];
    assert.deepEqual(
      { kinds, course, reminders, include_notes },
      { kinds: ['exams'], course: 'Biology', reminders: [{ minutes_before: 30 }], include_notes: false },
      "the student's choices",
    );
    assert.deepEqual(
      doc.authorizations.map((a: { client_name: string }) => a.client_name),
      ['Test app'],
      'the sign-in of the test client',
    );
    assert.deepEqual(ids('oauth_clients'), [clientId]);
    assert.deepEqual(
      doc.payments.map((p: { provider_event_id: string }) => p.provider_event_id),
      [payment],
    );
    assert.deepEqual(ids('study_rooms'), [room]);

    const text = res.text;
    assert.ok(
      !text.includes(bob.id) && !text.includes(bobsTask.title) && !text.includes(bob.email),
      'nothing of another student',
    );
    const { password_hash } = await db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', alice.id)
      .executeTakeFirstOrThrow();
    const { key_hash } = await db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    const { token_hash: feed_hash } = await db
      .selectFrom('calendar_feeds')
      .select('token_hash')
      .where('id', '=', feed.id)
      .executeTakeFirstOrThrow();
    const { secret_sealed } = await db
      .selectFrom('webhook_endpoints')
      .select('secret_sealed')
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    const refreshHashes = await db
      .selectFrom('oauth_refresh_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select('t.token_hash')
      .where('g.user_id', '=', alice.id)
      .execute();
    const secrets = {
      webhook_secret: endpoint.secret,
      webhook_secret_sealed: secret_sealed,
      api_key: key.key,
      key_hash,
      feed_url: new URL(feed.url).pathname.slice('/api/calendar/'.length),
      feed_hash,
      password_hash: password_hash!,
      client_secret_hash: clientSecretHash,
      refresh_token: alice.refresh_token,
      access_token: alice.token,
    };
    for (const [name, secret] of Object.entries(secrets))
      assert.ok(secret && !text.includes(secret), `${name} is not in the export`);
    for (const { token_hash } of refreshHashes) assert.ok(!text.includes(token_hash), 'no refresh token hash');
    assert.ok(!text.includes('whsec_'), 'no signing secret of any form');
  });

  it('needs account:export, which no other scope implies, and one credential; a personal key with it works', async () => {
    const everythingElse = await ctx.newStudent({ scopes: ALL_SCOPES.filter((s) => s !== 'account:export') });
    const res = await ctx.api.get(PATH).set(everythingElse.headers).expect(403);
    assert.equal(res.body.code, 'insufficient_scope');
    await ctx.api.get(PATH).expect(401);
    const two = { ...everythingElse.headers, 'x-service-api-key': 'svc_live_x' };
    assert.equal(
      (await ctx.api.get(PATH).set(two).expect(400)).body.code,
      'invalid_request',
      'one credential per request',
    );
    const owner = await ctx.newStudent();
    const key = (
      await ctx.api
        .post('/api/users/me/api-keys')
        .set(owner.headers)
        .send({ name: 'backup', scopes: ['account:export'] })
        .expect(201)
    ).body.key;
    const doc = (await ctx.api.get(PATH).set({ 'x-service-api-key': key }).expect(200)).body;
    assert.equal(doc.user.id, owner.id);
    assert.deepEqual(doc.tasks, []);
  });

  describe('over the network', () => {
    let server: Listening;
    let alice: Student;
    before(async function () {
      this.timeout(120_000);
      server = await listen(ctx.app);
      alice = await ctx.newStudent();
      await addManyTasks(ctx.db, alice.id, MANY_TASKS);
    });
    after(() => server?.close());

    it(`streams: with ${MANY_TASKS} tasks the first bytes arrive before the last section is read`, async function () {
      this.timeout(120_000);
      const room = `room ${randomUUID()}`;
      if (onPostgres) {
        // The last section (study_rooms) cannot be read while another session holds its table: the first bytes can
        // only arrive before the export's end if the document is written as it is read.
        const locker = new pg.Client({ connectionString: testDatabase().url });
        await locker.connect();
        try {
          await locker.query('begin');
          await locker.query('lock table study_rooms in access exclusive mode');
          const { first, rest } = await pausedExport(server, alice);
          assert.match(first, /^\{"format_version":"1","exported_at":"[^"]+","user":\{/);
          // Added after the export's snapshot: the document must not show it (one snapshot on PostgreSQL).
          await locker.query('insert into study_rooms (name, created_by) values ($1, $2)', [room, alice.id]);
          await locker.query('commit');
          const { body, complete } = await rest();
          assert.ok(complete);
          const doc = JSON.parse(body);
          assert.equal(doc.tasks.length, MANY_TASKS);
          assert.deepEqual(doc.study_rooms, [], 'a row committed after the snapshot is not in the export');
        } finally {
          await locker.end();
        }
      } else {
        // The embedded database reads page by page: a row added once the first bytes arrived, while the server waits
        // for this client to read, is in the last section, so that section was read after the first bytes left.
        const { first, rest } = await pausedExport(server, alice);
        assert.match(first, /^\{"format_version":"1","exported_at":"[^"]+","user":\{/);
        await ctx.db.insertInto('study_rooms').values({ name: room, created_by: alice.id }).execute();
        const { body, complete } = await rest();
        assert.ok(complete);
        const doc = JSON.parse(body);
        assert.equal(doc.tasks.length, MANY_TASKS);
        assert.deepEqual(
          doc.study_rooms.map((r: { name: string }) => r.name),
          [room],
        );
        await ctx.db.deleteFrom('study_rooms').where('created_by', '=', alice.id).execute();
      }
    });

    it('a client that disconnects mid-stream ends the export and leaves no connection or transaction behind', async function () {
      this.timeout(120_000);
      // More exports than the PostgreSQL pool has connections (10): a leaked connection per export would leave none.
      for (let i = 0; i < 12; i++) {
        const { res } = await pausedExport(server, alice);
        assert.equal(res.statusCode, 200);
        res.destroy();
        // One export per account at a time: the next waits until the server has seen this client go.
        assert.equal(
          await eventually(
            () => exportLeasesOf(ctx.db, alice.id),
            (n) => n === 0,
          ),
          0,
          'the export ends with its client',
        );
      }
      await ctx.api.get('/api/users/me').set(alice.headers).expect(200);
      if (onPostgres) {
        // The exports end when the server sees each close; none stays open in its transaction.
        const open = await eventually(
          async () => (await exportSessions(ctx)).length,
          (n) => n === 0,
        );
        assert.equal(open, 0, 'no export transaction left open');
      }
      const doc = (await ctx.api.get(PATH).set(alice.headers).expect(200)).body;
      assert.equal(doc.tasks.length, MANY_TASKS, 'the next export works in full');
    });

    it('a database failure mid-stream ends the connection abnormally: the client never gets a complete document', async function () {
      if (!onPostgres) this.skip(); // PGlite runs in this process: no connection of it can fail on its own
      this.timeout(120_000);
      // The export is held inside its snapshot, after its first sections, by a lock on its last section's table: a
      // paused client alone does not hold it, since the kernel's socket buffers can take the whole document.
      const locker = new pg.Client({ connectionString: testDatabase().url });
      await locker.connect();
      let rest: Awaited<ReturnType<typeof pausedExport>>['rest'];
      try {
        await locker.query('begin');
        await locker.query('lock table study_rooms in access exclusive mode');
        const started = await pausedExport(server, alice);
        assert.equal(started.res.statusCode, 200, `the export started: ${started.first}`);
        rest = started.rest;
        // Its session goes away (a failover, an operator's pg_terminate_backend). Reading up to the locked table takes
        // a loaded machine a while: up to a minute is waited for.
        // Only the wait on the lock is waited for: between two earlier sections the session is idle in its transaction
        // for a moment, and once its next statement starts it is neither idle nor waiting until it reaches the lock.
        const waiting = await eventually(
          () => exportSessions(ctx, 'waiting on a lock'),
          (pids) => pids.length === 1,
          600,
        );
        assert.equal(waiting.length, 1, 'the export waits in its snapshot');
        assert.equal(await terminateSession(ctx, waiting[0]!), true);
      } finally {
        await locker.end();
      }
      const { body, complete } = await rest();
      assert.equal(complete, false, 'the transfer ends without its last chunk');
      assert.throws(() => JSON.parse(body), SyntaxError);
      await ctx.api.get('/api/users/me').set(alice.headers).expect(200);
    });
  });
});
