// A crash (kill -9) of the real server process on PostgreSQL + Redis while graded reviews of a few cards are in flight
// from many connections, half of them with an Idempotency-Key (written in the key's transaction) and half without
// (each one statement in autocommit after an unlocked read, services/flashcards/reviews.ts), each dated a different
// second in the past so that many arrive after a later one and are replayed into their place. Then a restart on the
// same database and a retry of every keyed review with its key. What must hold: every acknowledged review is in the
// log exactly once (and an unacknowledged one without a key at most once), each card is the replay of its log, and
// what the reviews derive is what the log implies: one card.updated event per logged review, one xp award per card
// and local day reviewed (within the daily cap), the student's xp grown by the ledger's new awards, and the last study
// day the latest day reviewed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { pushed } from '../../db/queries/readiness.ts';
import { replayReviews, type Grade } from '../../domain/srs.ts';
import { localDate } from '../../domain/student-day.ts';
import { CAPPED_SOURCES, DAILY_CAP, type XpSource } from '../../domain/xp.ts';
import { sameState, upcomingReadiness, type ExamReadinessState } from '../../services/readiness/readiness.ts';
import { crashServers, faultDatabase, requiredEnv, type FaultDatabase } from './support/fixture.ts';

/** Reviews in flight when the process is killed, over CARDS cards. */
const REVIEWS = 80;
const CARDS = 4;

interface Attempt {
  cardId: string;
  grade: Grade;
  reviewedAt: string;
  /** The Idempotency-Key, for half of them. */
  key: string | undefined;
  /** The first answer, when one came before the kill. */
  first?: { status: number; body: { review: { id: string } } };
}

// Two students: one readiness does not follow (no upcoming exam), whose reviews without a key are written alone; and
// one it follows, with the reviewed deck linked to her nearest exam, whose reviews without a key are decided on
// readiness's facts: written alone when they move no readiness (the gate checking the facts), in a transaction with the
// move when they do.
for (const readinessFollows of [false, true])
  describe(`kill -9 during card reviews from many connections, then retries (${readinessFollows ? 'a student readiness follows' : 'no upcoming exam'})`, function () {
    this.timeout(90_000);
    const redisUrl = requiredEnv('REDIS_URL');
    let database: FaultDatabase;
    const servers = crashServers(() => database, redisUrl);

    before(async () => {
      database = await faultDatabase('sc_fault_review_crash');
      if (!readinessFollows) await database.db.deleteFrom('exams').where('user_id', '=', database.studentId).execute();
    });
    after(async () => {
      servers.killAll();
      await database?.drop();
    });

    const start = servers.start;
    const send = (baseUrl: string, path: string, body: unknown, key?: string) =>
      fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'X-Service-API-Key': database.studentKey,
          'content-type': 'application/json',
          ...(key ? { 'Idempotency-Key': key } : {}),
        },
        body: JSON.stringify(body),
      });
    const review = (baseUrl: string, attempt: Attempt) =>
      send(
        baseUrl,
        `/api/flashcards/cards/${attempt.cardId}/reviews`,
        { grade: attempt.grade, reviewed_at: attempt.reviewedAt },
        attempt.key,
      );

    it('logs every acknowledged review once, and the cards and derived state are what the logs make', async () => {
      const first = start();
      const firstUrl = await first.listening;
      const deck = (await (await send(firstUrl, '/api/flashcards/decks', { title: 'Crash' })).json()) as { id: string };
      const cards: string[] = [];
      for (let i = 0; i < CARDS; i++) {
        const response = await send(firstUrl, `/api/flashcards/decks/${deck.id}/cards`, { front: `Q${i}`, back: 'A' });
        cards.push(((await response.json()) as { id: string }).id);
      }
      if (readinessFollows) {
        const exam = await database.db
          .selectFrom('exams')
          .select('id')
          .where('user_id', '=', database.studentId)
          .where('exam_date', '>=', new Date().toISOString().slice(0, 10))
          .orderBy('exam_date')
          .executeTakeFirstOrThrow();
        const linked = await fetch(`${firstUrl}/api/exams/${exam.id}`, {
          method: 'PATCH',
          headers: { 'X-Service-API-Key': database.studentKey, 'content-type': 'application/json' },
          body: JSON.stringify({ deck_ids: [deck.id] }),
        });
        assert.equal(linked.status, 200, await linked.text());
      }
      const student = await database.db
        .selectFrom('users')
        .select(['time_zone', 'last_study_date', 'xp'])
        .where('id', '=', database.studentId)
        .executeTakeFirstOrThrow();
      const awardsBefore = new Set(
        (
          await database.db
            .selectFrom('xp_awards')
            .select('award_key')
            .where('user_id', '=', database.studentId)
            .execute()
        ).map((award) => award.award_key),
      );
      const now = Date.now();
      // Sent in an order unlike their times: review i is dated (REVIEWS - (i * 7) % REVIEWS) seconds ago.
      const attempts: Attempt[] = Array.from({ length: REVIEWS }, (_, i) => ({
        cardId: cards[i % CARDS]!,
        grade: ((i % 5) + 1) as Grade,
        reviewedAt: new Date(now - (REVIEWS - ((i * 7) % REVIEWS)) * 1000).toISOString(),
        // Every card gets reviews of both kinds: keyed for the even rounds over the cards, keyless for the odd ones.
        key: Math.floor(i / CARDS) % 2 === 0 ? randomUUID() : undefined,
      }));
      let answered = 0;
      let answeredWithoutKey = 0;
      const inFlight = attempts.map((attempt) =>
        review(firstUrl, attempt).then(
          async (response) => {
            attempt.first = { status: response.status, body: (await response.json()) as { review: { id: string } } };
            answered += 1;
            if (!attempt.key) answeredWithoutKey += 1;
          },
          () => {}, // cut by the kill
        ),
      );
      // A student's reviews without a key wait in line in the process (services/flashcards/reviews.ts): the kill waits
      // for a few of them as well.
      while (answered < REVIEWS / 4 || answeredWithoutKey < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      first.child.kill('SIGKILL');
      await first.exited;
      await Promise.all(inFlight);
      assert.ok(
        attempts.some((a) => !a.first),
        'some reviews were still in flight when the process died',
      );
      for (const attempt of attempts) if (attempt.first) assert.equal(attempt.first.status, 201);
      assert.ok(
        attempts.some((a) => !a.key && a.first),
        'reviews without a key (one statement each) were acknowledged before the crash',
      );

      const second = start();
      const secondUrl = await second.listening;
      await Promise.all(
        attempts
          .filter((attempt) => attempt.key)
          .map(async (attempt) => {
            const response = await review(secondUrl, attempt);
            const body = (await response.json()) as { review: { id: string } };
            assert.equal(response.status, 201, JSON.stringify(body));
            if (attempt.first) {
              assert.equal(response.headers.get('idempotent-replayed'), 'true', 'an answered review is replayed');
              assert.deepEqual(body, attempt.first.body);
            }
            attempt.first ??= { status: response.status, body };
          }),
      );
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);

      const log = await database.db
        .selectFrom('flashcard_reviews')
        .select(['id', 'card_id', 'grade', 'reviewed_at'])
        .where('card_id', 'in', cards)
        .execute();
      const logged = (attempt: Attempt) =>
        log.filter((row) => row.card_id === attempt.cardId && row.reviewed_at.toISOString() === attempt.reviewedAt);
      let unacknowledgedLogged = 0;
      for (const attempt of attempts) {
        const rows = logged(attempt);
        if (attempt.first) {
          assert.equal(rows.length, 1, `an acknowledged review (${attempt.key ? 'with' : 'without'} a key) once`);
          assert.equal(rows[0]!.id, attempt.first.body.review.id);
          assert.equal(rows[0]!.grade, attempt.grade);
        } else {
          assert.ok(rows.length <= 1, 'an unacknowledged review without a key at most once');
          unacknowledgedLogged += rows.length;
        }
      }
      assert.equal(log.length, attempts.filter((a) => a.first).length + unacknowledgedLogged, 'no other review');

      // Each card is the replay of its log.
      const stored = await database.db
        .selectFrom('flashcard_cards')
        .select(['id', 'ease', 'repetitions', 'interval_days', 'next_due_at', 'last_reviewed_at', 'fsrs_state'])
        .where('id', 'in', cards)
        .execute();
      for (const card of stored) {
        const own = log.filter((row) => row.card_id === card.id).map((row) => ({ ...row, grade: row.grade as Grade }));
        assert.ok(own.length > 0, 'every card has keyed reviews, all logged after the retries');
        const { card: replayed } = replayReviews(card, own, student.time_zone, undefined, own[0]!.id);
        const schedule = (c: typeof replayed) => [
          c.ease,
          c.repetitions,
          c.interval_days,
          c.next_due_at.getTime(),
          c.last_reviewed_at?.getTime(),
        ];
        assert.deepEqual(schedule(card), schedule(replayed), `card ${card.id} is the replay of its log`);
      }

      // What the reviews derive, against the log.
      const events = await database.db
        .selectFrom('events')
        .select((eb) => [eb.ref('data').$castTo<{ object: { id: string } }>().as('data')])
        .where('user_id', '=', database.studentId)
        .where('type', '=', 'card.updated')
        .execute();
      for (const card of cards)
        assert.equal(
          events.filter((event) => event.data.object.id === card).length,
          log.filter((row) => row.card_id === card).length,
          'one card.updated per logged review',
        );
      const awards = await database.db
        .selectFrom('xp_awards')
        .select(['award_key', 'amount', 'local_date', 'source'])
        .where('user_id', '=', database.studentId)
        .execute();
      const reviewed = new Set(
        log.map((row) => `review:${row.card_id}:${localDate(row.reviewed_at, student.time_zone)}`),
      );
      assert.deepEqual(
        new Set(awards.filter((award) => cards.some((card) => award.award_key.includes(card))).map((a) => a.award_key)),
        reviewed,
        'one xp award per card and local day reviewed',
      );
      const capped = new Map<string, number>();
      for (const award of awards)
        if (CAPPED_SOURCES.includes(award.source as XpSource))
          capped.set(award.local_date, (capped.get(award.local_date) ?? 0) + award.amount);
      for (const [day, earned] of capped) assert.ok(earned <= DAILY_CAP, `${day}: ${earned} within the daily cap`);
      const after = await database.db
        .selectFrom('users')
        .select(['xp', 'last_study_date'])
        .where('id', '=', database.studentId)
        .executeTakeFirstOrThrow();
      assert.equal(
        after.xp - student.xp,
        awards.filter((award) => !awardsBefore.has(award.award_key)).reduce((sum, award) => sum + award.amount, 0),
        "the student's xp grew by the ledger's new awards",
      );
      const lastDay = [...log.map((row) => localDate(row.reviewed_at, student.time_zone)), student.last_study_date]
        .filter((day): day is string => day !== null)
        .sort()
        .at(-1);
      assert.equal(after.last_study_date, lastDay, 'the last study day is the latest day reviewed');
      if (readinessFollows) {
        // The end state, not each move (a keyed review's transaction compares with what was pushed, and would mend a
        // move an earlier review lost): after the crash, what was last pushed of each upcoming exam is readiness now.
        const current = await upcomingReadiness(
          database.db,
          { user_id: database.studentId, time_zone: student.time_zone },
          new Date(),
        );
        const last = new Map(
          (await pushed(database.db, database.studentId).execute()).map((row) => [
            row.exam_id,
            row.state as unknown as ExamReadinessState,
          ]),
        );
        assert.ok(current.length > 0, 'the student has upcoming exams');
        for (const state of current)
          assert.ok(
            sameState(last.get(state.exam_id), state),
            `exam ${state.exam_id}: last pushed ${JSON.stringify(last.get(state.exam_id))}, now ${JSON.stringify(state)}`,
          );
      }
    });
  });
