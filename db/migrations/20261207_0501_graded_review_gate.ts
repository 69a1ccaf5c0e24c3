// Frozen in time: a migration never imports application code, so it runs the same forever.
// The gate of a graded review written in one statement outside any transaction (db/queries/graded-review.ts): the
// card is read without locks, the review's step is computed from it, and then one statement takes the student's lock,
// checks that the card is still as it was read, and writes. A statement's own reads all see one snapshot, taken when
// the statement starts and so before any lock it waits for: the day's capped xp and whether readiness follows the
// student, read in the statement itself, could miss what the writer it waited for committed. A PL/pgSQL function
// that is VOLATILE takes a fresh snapshot for each of its statements, so what it reads after its lock is what that
// writer left. The write's data-modifying CTEs each depend on the gate's answer (a scalar sub-select of it), so the
// gate runs, and takes its locks, before any of them writes a row.
//
// The locks are the ones every write of a student takes, in the same order: the student's row FOR NO KEY UPDATE
// (db/student-transaction.ts), then the card's FOR UPDATE. Inside a transaction that holds them already, taking them
// again waits for nothing.
//
// `version`: the card's row version as read (xmin as text): any write of the row makes a new version with another
// xmin, so an equal one means nobody wrote the card since; null skips the check (a caller that read the card under
// the locks). `stop_if_follows`: write nothing when readiness follows the student (an upcoming exam, or a state
// pushed; db/queries/readiness.ts readinessFollows), whose review must compare readiness in a transaction.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function graded_review_gate(
      p_user uuid, p_card uuid, p_version text, p_from_date date, p_stop_if_follows boolean, p_day date,
      p_capped_sources text[]
    ) returns table (proceed boolean, readiness_follows boolean, capped_earned int)
    language plpgsql volatile as $$
    declare
      current_version text;
    begin
      perform 1 from users as u join flashcard_cards as c on c.user_id = u.id
        where u.id = p_user and c.id = p_card
        for no key update of u for update of c;
      select c.xmin::text into current_version from flashcard_cards as c where c.id = p_card and c.user_id = p_user;
      readiness_follows := exists (select from exams as e where e.user_id = p_user and e.exam_date >= p_from_date)
        or exists (select from exam_readiness as r where r.user_id = p_user and r.state is not null);
      capped_earned := (select coalesce(sum(a.amount), 0)::int from xp_awards as a
        where a.user_id = p_user and a.local_date = p_day and a.source = any(p_capped_sources));
      proceed := current_version is not null and (p_version is null or current_version = p_version)
        and not (p_stop_if_follows and readiness_follows);
      return next;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function graded_review_gate(uuid, uuid, text, date, boolean, date, text[])`.execute(db);
}
