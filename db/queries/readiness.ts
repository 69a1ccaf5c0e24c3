// The readiness stream's memory: the count of each student's readiness moves and, per exam, the state last pushed.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { executePrepared } from '../prepared-statements.ts';
import { studyDays, upcomingPreparation, type StudyWindow } from './exams.ts';

/**
 * The student's next version, counted up; the row stays locked until the transaction ends, so the moves of one
 * student are computed one after the other, each seeing what the one before it committed.
 */
export async function nextReadinessVersion(trx: Db, userId: string): Promise<number> {
  const [row] = await executePrepared(
    trx,
    trx
      .insertInto('readiness_versions')
      .values({ user_id: userId, version: 1 })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ version: sql<number>`readiness_versions.version + 1` }))
      .returning('version'),
  );
  return row!.version;
}

/** The version the student's readiness is at now; 0 before its first move. */
export async function currentReadinessVersion(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('readiness_versions')
    .select('version')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.version ?? 0;
}

/** The state last pushed of each exam the stream shows now (tombstones left out). */
export function pushed(db: Db, userId: string) {
  return db
    .selectFrom('exam_readiness')
    .select(['exam_id', 'state'])
    .where('user_id', '=', userId)
    .where('state', 'is not', null);
}

/**
 * Whether readiness follows the student: an exam from `fromDate` on, or a state pushed (one to take back once its exam
 * has passed or gone). Without either no review can move readiness (the move compares no exam with nothing pushed),
 * so a review need not read what a move compares: those facts cost a review's statement about as much as its writes,
 * in planning and starting their sub-plans whether or not they run.
 */
export function readinessFollows(db: Db, userId: string, fromDate: string) {
  return sql<boolean>`(${sql.join(
    [
      db
        .selectFrom('exams')
        .select(sql.lit(1).as('one'))
        .where('user_id', '=', userId)
        .where('exam_date', '>=', fromDate),
      pushed(db, userId),
    ].map((query) => sql`exists (${query})`),
    sql` or `,
  )})`;
}

/**
 * What a readiness move compares, in one statement: the upcoming exams with what prepares each and the window's
 * study days (as findUpcomingPreparation reads them), and the state last pushed of each exam.
 */
export async function findReadinessComparison(
  trx: Db,
  userId: string,
  fromDate: string,
  window: StudyWindow,
  limit: number,
) {
  const [row] = await executePrepared(
    trx,
    trx.selectNoFrom([
      upcomingPreparation(trx, userId, fromDate, limit).as('exams'),
      studyDays(trx, userId, window).as('study_days'),
      jsonArrayFrom(pushed(trx, userId)).as('pushed'),
    ]),
  );
  return row!;
}

/** What a readiness move compares, and whether the review's local day had study before it (a graded review's). */
export type FactsBeforeReview = Awaited<ReturnType<typeof findReadinessComparison>> & { day_studied: boolean };

/** Which facts readiness_facts reads: the window a move compares, and the review's local day as instants. */
export interface FactsQuestion {
  fromDate: string;
  limit: number;
  zone: string;
  since: Date;
  dayStart: Date;
  dayEnd: Date;
}

/**
 * readiness_facts (migration 20261207_0601): the facts as one jsonb, read by a function so that a statement can read
 * them in one expression; the same answers as findReadinessComparison with the review's day (held to it by
 * test/db/queries/readiness-facts.test.ts).
 */
export function readinessFacts(v: { userId: string } & FactsQuestion) {
  return sql<FactsBeforeReview>`readiness_facts(${v.userId}::uuid, ${v.fromDate}::date, ${v.limit}::int,
    ${v.zone}::text, ${v.since}::timestamptz, ${v.dayStart}::timestamptz, ${v.dayEnd}::timestamptz)`;
}

/**
 * The version of the student's readiness facts (migration 20261207_0701): every write of them moves it in its own
 * transaction, so facts read in one snapshot with a version are current while the version is. 0 before her first.
 */
export function readinessFactsVersion(db: Db, userId: string) {
  return sql<number>`coalesce((${db
    .selectFrom('readiness_fact_versions')
    .select('version')
    .where('user_id', '=', userId)}), 0)`;
}

/** Records a pushed state (null: the exam left the stream) under `version`. */
export async function recordReadiness(
  trx: Db,
  row: { exam_id: string; user_id: string; version: number; state: unknown; moved_at: Date },
): Promise<void> {
  const values = { ...row, state: row.state === null ? null : JSON.stringify(row.state) };
  await trx
    .insertInto('exam_readiness')
    .values(values)
    .onConflict((oc) =>
      oc.column('exam_id').doUpdateSet({ version: values.version, state: values.state, moved_at: values.moved_at }),
    )
    .execute();
}

/** What moved after `version`, oldest move first: each exam once, in the state of its latest move. */
export async function readinessMovedSince(db: Db, userId: string, version: number) {
  return db
    .selectFrom('exam_readiness')
    .select(['exam_id', 'version', 'state', 'moved_at'])
    .where('user_id', '=', userId)
    .where('version', '>', version)
    .orderBy('version')
    .orderBy('exam_id')
    .execute();
}
