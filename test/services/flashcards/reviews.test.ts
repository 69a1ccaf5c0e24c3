// services/flashcards/reviews.ts on the run's engine: a card is a function of its review log, whatever order its
// reviews arrive in, by one review or by a batch; and a review sent without a time is never placed before the card's
// last review (a concurrent review of the card, stamped later, may take the card's lock first).
import assert from 'node:assert/strict';
import type { Db } from '../../../db/connect.ts';
import { studentTransaction } from '../../../db/student-transaction.ts';
import type { Grade } from '../../../domain/srs.ts';
import type { Student } from '../../../server/auth/principal.ts';
import { recordReview, recordReviews, type GradedCard } from '../../../services/flashcards/reviews.ts';
import { db, deleteNewStudents, newCard, newDeck, newStudent } from '../../support/query-fixture.ts';

const MINUTE_MS = 60_000;

async function cardOf(): Promise<{ student: Student; card: string }> {
  const id = await newStudent();
  const card = (await newCard(id, await newDeck(id), new Date(Date.now() - 60 * MINUTE_MS))).id;
  return { student: { user_id: id, time_zone: 'UTC' } as Student, card };
}

const inTransaction = <T>(student: Student, work: (trx: Db) => Promise<T>) =>
  studentTransaction(db(), student.user_id, work);

/** The card's schedule, as the card's row holds it. */
async function schedule(card: string) {
  return db()
    .selectFrom('flashcard_cards')
    .select(['ease', 'repetitions', 'interval_days', 'next_due_at', 'last_reviewed_at', 'fsrs_state'])
    .where('id', '=', card)
    .executeTakeFirstOrThrow();
}

describe('graded reviews: the card as its log makes it', () => {
  after(deleteNewStudents);
  const now = new Date();
  const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE_MS);
  const review = (card: string, grade: Grade, minutes: number): GradedCard => ({
    card_id: card,
    grade,
    reviewedAt: ago(minutes),
  });

  it('ends the same card for one review at a time in any order, and for a batch that arrives late', async () => {
    // Five reviews in time order: 5 at -50, 4 at -40, 1 at -30, 3 at -20, 5 at -10 minutes.
    const plan: [Grade, number][] = [
      [5, 50],
      [4, 40],
      [1, 30],
      [3, 20],
      [5, 10],
    ];
    const orders = [
      [0, 1, 2, 3, 4],
      [4, 3, 2, 1, 0],
      [2, 4, 0, 3, 1],
    ];
    const cards = [];
    for (const order of orders) {
      const { student, card } = await cardOf();
      for (const index of order) {
        const [grade, minutes] = plan[index]!;
        await inTransaction(student, (trx) => recordReview(trx, student, review(card, grade, minutes), now));
      }
      cards.push(await schedule(card));
    }
    // A batch of three whose first is older than the card's last and whose others fall between logged ones.
    const { student, card } = await cardOf();
    for (const index of [1, 4])
      await inTransaction(student, (trx) => recordReview(trx, student, review(card, ...plan[index]!), now));
    const batch = [0, 2, 3].map((index) => review(card, ...plan[index]!));
    await inTransaction(student, (trx) => recordReviews(trx, student, batch, now));
    cards.push(await schedule(card));

    for (const other of cards.slice(1)) assert.deepEqual(other, cards[0]);
    // 5, 4 pass (1 day, then 6); 1 restarts; 3, 5 pass again (1 day, then 6), from the last review's time.
    const [first] = cards as [Awaited<ReturnType<typeof schedule>>];
    assert.deepEqual(
      [first.repetitions, first.interval_days, first.last_reviewed_at?.getTime()],
      [2, 6, ago(10).getTime()],
    );
  });

  it('ends the same card for reviews written alone (no transaction given), sent all at once in any order', async () => {
    const plan: [Grade, number][] = [
      [5, 50],
      [4, 40],
      [1, 30],
      [3, 20],
      [5, 10],
    ];
    const reference = await cardOf();
    for (const [grade, minutes] of plan)
      await inTransaction(reference.student, (trx) =>
        recordReview(trx, reference.student, review(reference.card, grade, minutes), now),
      );
    for (const order of [
      [4, 3, 2, 1, 0],
      [2, 4, 0, 3, 1],
    ]) {
      const { student, card } = await cardOf();
      // Each from the pool: the card read without locks, then one statement whose gate checks the card is unmoved.
      const recorded = await Promise.all(
        order.map((index) => recordReview(db(), student, review(card, ...plan[index]!), now)),
      );
      assert.ok(recorded.every((one) => one !== undefined));
      assert.deepEqual(await schedule(card), await schedule(reference.card));
      const logged = await db().selectFrom('flashcard_reviews').select('id').where('card_id', '=', card).execute();
      assert.equal(logged.length, plan.length);
    }
  });

  it('keeps the order given among a batch’s reviews of one instant, also when the batch is replayed', async () => {
    const { student, card } = await cardOf();
    // At one instant: 0 then 5, as given (a pass last: repetitions 1); a review after them arrives first.
    await inTransaction(student, (trx) => recordReview(trx, student, review(card, 4, 10), now));
    const batch = [review(card, 0, 20), review(card, 5, 20)];
    const { reviewed } = (await inTransaction(student, (trx) => recordReviews(trx, student, batch, now))) as {
      reviewed: { review: { repetitions: number } }[];
    };
    assert.deepEqual(
      reviewed.map((result) => result.review.repetitions),
      [0, 1],
    );
    // 0, 5 then 4: passed twice after the restart.
    assert.deepEqual([(await schedule(card)).repetitions, (await schedule(card)).interval_days], [2, 6]);
    // A second replay (a review older still) keeps them in that order.
    await inTransaction(student, (trx) => recordReview(trx, student, review(card, 3, 30), now));
    assert.deepEqual([(await schedule(card)).repetitions, (await schedule(card)).interval_days], [2, 6]);
  });

  it('records an untimed review just after the card’s last when a later-stamped one took the lock first', async () => {
    const { student, card } = await cardOf();
    // The later request's review (now, grade 5) is recorded first; the earlier request's (stamped a second before,
    // grade 0, no time of its own) follows it.
    const passed = { card_id: card, grade: 5 as Grade, reviewedAt: undefined };
    await inTransaction(student, (trx) => recordReview(trx, student, passed, now));
    const earlier = new Date(now.getTime() - 1000);
    const failed = { card_id: card, grade: 0 as Grade, reviewedAt: undefined };
    const recorded = await inTransaction(student, (trx) => recordReview(trx, student, failed, earlier));
    assert.equal(recorded!.review.reviewed_at.getTime(), now.getTime() + 1);
    // In the order recorded: passed, then failed (restarted), not the other way round.
    const after = await schedule(card);
    assert.deepEqual([after.repetitions, after.last_reviewed_at?.getTime()], [0, now.getTime() + 1]);
  });
});
