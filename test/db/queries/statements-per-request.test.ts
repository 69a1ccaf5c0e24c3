// Round trips to the database per request on the student's hot routes. On this service a write's CPU is mostly per
// statement (a socket write and read, the driver's protocol, the query's compile), so the count is the figure that a
// change to these routes must not lose. Counted at the driver: every statement pg sends, BEGIN and COMMIT included.
// PostgreSQL only (pg's client); PGlite runs the same SQL.
import assert from 'node:assert/strict';
import pg from 'pg';
import { generalApp, type Student } from '../../support/general-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const DAY_MS = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);

/** The statements pg sent while `request` ran, by their text (the first words). */
async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first] = args;
    const text = typeof first === 'string' ? first : ((first as { text?: string }).text ?? '');
    sent.push(text.replace(/\s+/g, ' ').slice(0, 60));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await request();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

/** A student with a card; with an upcoming exam of its deck (readiness follows her) unless `exam` is false. */
async function student({ exam = true } = {}): Promise<{ api: Api; alice: Student; cardId: string }> {
  const { api, newStudent } = await generalApp();
  const alice = await newStudent();
  const deck = (await api.post('/api/flashcards/decks').set(alice.headers).send({ title: 'Anatomy' }).expect(201)).body;
  const card = (
    await api
      .post(`/api/flashcards/decks/${deck.id}/cards`)
      .set(alice.headers)
      .send({ front: 'Femur?', back: 'Thigh bone.' })
      .expect(201)
  ).body;
  if (exam)
    await api
      .post('/api/exams')
      .set(alice.headers)
      .send({ subject: 'Anatomy', exam_date: inDays(10), deck_ids: [deck.id] })
      .expect(201);
  // Once, so that what the first request of a credential reads (and caches) is not counted.
  await api.get('/api/today/loop').set(alice.headers).expect(200);
  return { api, alice, cardId: card.id };
}

describe('statements per request (PostgreSQL)', function () {
  before(function () {
    if (!process.env.DATABASE_URL) this.skip();
  });

  it('GET /api/today/loop: one statement', async () => {
    const { api, alice } = await student();
    const sent = await statementsOf(() => api.get('/api/today/loop').set(alice.headers).expect(200));
    assert.equal(sent.length, 1, sent.join('\n'));
  });

  it('GET /api/schedule (the week view): one statement', async () => {
    const { api, alice } = await student();
    await api.get('/api/schedule').set(alice.headers).expect(200);
    const sent = await statementsOf(() => api.get('/api/schedule').set(alice.headers).expect(200));
    assert.equal(sent.length, 1, sent.join('\n'));
  });

  it('POST /api/tasks without an Idempotency-Key: one statement (the lock, the task and its event)', async () => {
    const { api, alice } = await student();
    const task = { title: 'Problem set 4', due_at: `${inDays(3)}T09:00:00Z`, course: 'Linear Algebra' };
    let created: Record<string, unknown> = {};
    const sent = await statementsOf(
      async () => (created = (await api.post('/api/tasks').set(alice.headers).send(task).expect(201)).body),
    );
    assert.equal(sent.length, 1, sent.join('\n'));
    // The event is made from the row before it is stored: it tells exactly what the answer shows.
    const events = await testDatabase()
      .db.selectFrom('events')
      .select(['data', 'created_at'])
      .where('user_id', '=', alice.id)
      .where('type', '=', 'task.created')
      .execute();
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data, { object: created });
    assert.equal(events[0]!.created_at.toISOString(), created.created_at);
  });

  it('POST a card review of a student readiness does not follow: two statements in autocommit, no begin', async () => {
    const { api, alice, cardId } = await student({ exam: false });
    await api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 2 }).expect(201);
    const sent = await statementsOf(() =>
      api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 2 }).expect(201),
    );
    // The card read without locks, then the gate (the student's lock and the card's, the card's version checked)
    // with the review's writes (card, log, study day, xp, the card's event) as one statement.
    assert.deepEqual(
      sent.map((text) => text.split(' ')[0]),
      ['select', 'with'],
      sent.join('\n'),
    );
    assert.match(sent[1]!, /^with "gate" as/, sent.join('\n'));
    const events = await testDatabase()
      .db.selectFrom('events')
      .select('type')
      .where('user_id', '=', alice.id)
      .where('type', '=', 'card.updated')
      .execute();
    assert.equal(events.length, 2);
  });

  it('POST a card review whose readiness did not move: two statements in autocommit, no readiness version written', async () => {
    const { api, alice, cardId } = await student();
    await api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 2 }).expect(201);
    const sent = await statementsOf(() =>
      api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 2 }).expect(201),
    );
    assert.ok(!sent.some((text) => text.includes('readiness_versions')), sent.join('\n'));
    // Readiness follows her (an upcoming exam): the card read without locks brings readiness's facts, the review is
    // found to move nothing, and the gate (the locks, the card's version and the facts' checked) with the review's
    // writes (card, log, study day, xp, and the card's event: card.updated, for the sync and webhooks) is one statement.
    assert.deepEqual(
      sent.map((text) => text.split(' ')[0]),
      ['select', 'with'],
      sent.join('\n'),
    );
    assert.match(sent[1]!, /^with "gate" as/, sent.join('\n'));
    const events = await testDatabase()
      .db.selectFrom('events')
      .select('type')
      .where('user_id', '=', alice.id)
      .where('type', '=', 'card.updated')
      .execute();
    assert.equal(events.length, 2);
  });

  it('POST a burst of reviews of one card readiness follows: one statement each after the first, none in vain', async () => {
    const { api, alice, cardId } = await student();
    await api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 2 }).expect(201);
    const burst = 4;
    const sent = await statementsOf(() =>
      Promise.all(
        Array.from({ length: burst }, () =>
          api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 2 }).expect(201),
        ),
      ),
    );
    // In the student's line, each review after the first starts from the card and readiness's facts as the one
    // before it left them (the facts with its review applied, under the version its write left): had the gate found
    // another version, the review would have read them again, a statement more.
    assert.deepEqual(
      sent.map((text) => text.split(' ')[0]),
      ['select', ...Array.from({ length: burst }, () => 'with')],
      sent.join('\n'),
    );
    const logged = await testDatabase()
      .db.selectFrom('flashcard_reviews')
      .select('id')
      .where('card_id', '=', cardId)
      .execute();
    assert.equal(logged.length, burst + 1);
  });

  it("POST a review older than the card's last: one statement more, the read of the card's log", async () => {
    const { api, alice, cardId } = await student({ exam: false });
    const last = Date.now() - 10 * 60_000;
    const review = (at: number) =>
      api
        .post(`/api/flashcards/cards/${cardId}/reviews`)
        .set(alice.headers)
        .send({ grade: 2, reviewed_at: new Date(at).toISOString() })
        .expect(201);
    await review(last);
    // A millisecond earlier, on the same study day: the replay leaves the card's memory as it was.
    const sent = await statementsOf(() => review(last - 1));
    assert.equal(sent.length, 3, sent.join('\n'));
    assert.match(sent[1]!, /^select .*"reviewed_at" from "flashcard/, sent.join('\n'));
  });

  it("POST a card's first review of the day: its xp and study day in the same write, before readiness's move", async () => {
    const { api, alice, cardId } = await student();
    const sent = await statementsOf(() =>
      api.post(`/api/flashcards/cards/${cardId}/reviews`).set(alice.headers).send({ grade: 5 }).expect(201),
    );
    const award = await testDatabase()
      .db.selectFrom('xp_awards')
      .select('amount')
      .where('user_id', '=', alice.id)
      .where('source', '=', 'review')
      .executeTakeFirstOrThrow();
    const { streak } = await testDatabase()
      .db.selectFrom('users')
      .select('streak')
      .where('id', '=', alice.id)
      .executeTakeFirstOrThrow();
    assert.equal(award.amount, 3);
    assert.equal(streak, 1);
    // The first review moves readiness, as the card's unlocked read with readiness's facts tells before the write: the
    // review's statement (its gate checking the facts under the locks) runs first in a transaction, and what follows
    // its write is the move (its version, states and milestones), from the same facts, and the commit.
    assert.deepEqual(
      sent.slice(0, 3).map((text) => text.split(' ')[0]),
      ['select', 'begin', 'with'],
      sent.join('\n'),
    );
    assert.match(sent[2]!, /^with "gate" as/, sent.join('\n'));
    assert.ok(sent[3]!.includes('readiness_versions'), sent.join('\n'));
    assert.equal(sent.at(-1), 'commit');
  });
});
