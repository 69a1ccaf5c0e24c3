// Rows the query tests (test/db/queries/) start from, on the run's database: a fresh student per test and the decks,
// cards, tasks, exams, endpoints and events a query reads, written with the production query functions, so a row
// looks as the service writes it. Fresh students keep the tests apart from each other and from the seeded data.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { insertEvent } from '../../db/queries/events.ts';
import { insertExam } from '../../db/queries/exams.ts';
import { insertCard, insertDeck } from '../../db/queries/flashcards.ts';
import type { GradedReviewWrite } from '../../db/queries/graded-review.ts';
import { insertClient, insertGrant } from '../../db/queries/oauth.ts';
import { insertAccount } from '../../db/queries/profile.ts';
import { insertTask, updateTask } from '../../db/queries/tasks.ts';
import { deleteAccount } from '../../db/queries/users.ts';
import { localDate } from '../../domain/student-day.ts';
import { leaveEveryRoom } from '../../services/rooms/leaving.ts';
import { insertEndpoint, type EndpointOwner } from '../../db/queries/webhooks.ts';
import { testDatabase } from './shared-database.ts';

export const db = (): Db => testDatabase().db;

const unique = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 16)}`;

const created: string[] = [];

/** A new account; its id. */
export async function newStudent(options: { timeZone?: string } = {}): Promise<string> {
  const nickname = unique('q');
  const row = await insertAccount(db(), {
    email: `${nickname}@example.com`,
    password_hash: 'never-verified',
    nickname,
    first_name: 'Query',
    time_zone: options.timeZone ?? 'UTC',
    country_code: null,
  });
  created.push(row.id);
  return row.id;
}

/**
 * Deletes the students made so far, with everything of theirs (the foreign keys cascade), after each file: the tests
 * that follow meet the run's database as the seed left it (its leaderboards, its counts, no pending delivery to a
 * receiver that does not exist for another test's delivery worker to send).
 */
export async function deleteNewStudents(): Promise<void> {
  for (const id of created.splice(0)) await deleteWithRooms(db(), id);
}

/** Deletes the account as its owner's request does: its study rooms left first (an owned room passes on or closes). */
export async function deleteWithRooms(db: Db, userId: string): Promise<boolean> {
  return deleteAccount(db, userId, (trx) => leaveEveryRoom(trx, userId, new Date()));
}

/** A deck created at `at` (decks list newest first); its id. */
export async function newDeck(userId: string, at = new Date()): Promise<string> {
  return insertDeck(db(), { user_id: userId, title: unique('deck') }, at);
}

/** A new card, created and due at `dueAt`. */
export async function newCard(userId: string, deckId: string, dueAt: Date) {
  return insertCard(db(), { user_id: userId, deck_id: deckId, front: 'front', back: 'back' }, dueAt);
}

/** A review of the card at `at` that makes it due at `nextDueAt`, recorded and applied as a review is. */
export async function reviewCard(userId: string, cardId: string, at: Date, nextDueAt: Date): Promise<void> {
  const outcome = {
    grade: 4,
    reviewed_at: at,
    ease: 2.5,
    repetitions: 1,
    interval_days: 1,
    next_due_at: nextDueAt,
    applied: true,
    fsrs_state: null,
  };
  await db()
    .transaction()
    .execute(async (trx) => {
      const { fsrs_state: _memory, ...logged } = outcome;
      await trx
        .updateTable('flashcard_cards')
        .set({
          ease: outcome.ease,
          repetitions: outcome.repetitions,
          interval_days: outcome.interval_days,
          next_due_at: nextDueAt,
          last_reviewed_at: at,
          updated_at: at,
        })
        .where('id', '=', cardId)
        .where('user_id', '=', userId)
        .execute();
      await trx
        .insertInto('flashcard_reviews')
        .values({ ...logged, card_id: cardId, user_id: userId })
        .execute();
    });
}

/** A one-off task (or the first occurrence of a series, with `recurrence`). */
export async function newTask(
  userId: string,
  dueAt: Date,
  options: { course?: string; recurrence?: string; title?: string } = {},
) {
  return insertTask(
    db(),
    {
      user_id: userId,
      title: options.title ?? unique('task'),
      course: options.course ?? null,
      due_at: dueAt,
      notes: null,
      priority: 'normal',
      recurrence: options.recurrence ?? null,
      series_starts_at: options.recurrence ? dueAt : null,
    },
    dueAt,
  );
}

export async function completeTask(userId: string, taskId: string, at: Date): Promise<void> {
  await updateTask(db(), userId, taskId, { status: 'completed', completed_at: at, updated_at: at });
}

/** An exam on `date` ('YYYY-MM-DD'). */
export async function newExam(userId: string, date: string, subject = unique('exam')) {
  return insertExam(db(), { user_id: userId, subject, exam_date: date }, new Date());
}

/** An enabled endpoint of the owner for `eventTypes`; its id. Its secret is never read by the queries under test. */
export async function newEndpoint(
  owner: EndpointOwner,
  eventTypes: string[],
  options: { enabled?: boolean } = {},
): Promise<string> {
  const id = randomUUID();
  const url = 'https://receiver.example.com/hook';
  await insertEndpoint(
    db(),
    owner,
    { id, url, event_types: eventTypes, description: '', enabled: options.enabled ?? true, secret_sealed: 'unsealed' },
    new Date(),
  );
  return id;
}

/** An event of the student in the outbox, marked fanned out: the test makes its deliveries, not another's fan-out. */
/** What `fn` returns, from a transaction that is then rolled back: what a write would do, leaving nothing behind. */
export async function rolledBack<T>(database: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  const rollback = new Error('rolled back');
  let result: T | undefined;
  await database
    .transaction()
    .execute(async (trx) => {
      result = await fn(trx);
      throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });
  return result as T;
}

export async function newEvent(userId: string, type: string, at = new Date()): Promise<string> {
  return insertEvent(db(), { type, user_id: userId, data: {}, created_at: at, fanned_out_at: at });
}

/** An app (OAuth client) with a live grant of `scopes` from the student. */
export async function newAppGrant(userId: string, scopes: string[]): Promise<{ clientId: string; grantId: string }> {
  const clientId = unique('app');
  await insertClient(db(), {
    id: clientId,
    name: 'Query app',
    secret_hash: null,
    redirect_uris: ['https://app.example.com/cb'],
    grants: ['authorization_code'],
    scopes,
    owner_user_id: null,
  });
  return { clientId, grantId: await insertGrant(db(), { client_id: clientId, user_id: userId, scopes }) };
}

/**
 * The write of a graded review of `cardId` at `reviewedAt` (db/queries/graded-review.ts), as the service would make it
 * for a student in `zone`: the card due a day later, no xp awarded.
 */
export function gradedReviewWrite(userId: string, cardId: string, reviewedAt: Date, zone: string): GradedReviewWrite {
  const day = localDate(reviewedAt, zone);
  const step = {
    ease: 2.5,
    repetitions: 0,
    interval_days: 1,
    next_due_at: new Date(reviewedAt.getTime() + 86_400_000),
    fsrs_state: null,
  };
  return {
    userId,
    cardId,
    reviewId: randomUUID(),
    outcome: { grade: 2, reviewed_at: reviewedAt, ...step },
    card: { ...step, last_reviewed_at: reviewedAt },
    events: [],
    at: reviewedAt,
    studyDay: true,
    day,
    xp: { key: `review:${cardId}:${day}`, source: 'review', amount: 0, cap: 100, cappedSources: ['review'] },
  };
}
