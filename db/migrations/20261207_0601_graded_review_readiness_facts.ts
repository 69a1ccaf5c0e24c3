// Frozen in time: a migration never imports application code, so it runs the same forever.
// A graded review of a student readiness follows (an upcoming exam, or a state pushed) written in one statement
// outside any transaction, as 20261207_0501 did for the others. Such a review must leave readiness's stream right: it
// may be written alone only when it moves no exam's readiness, which the review's caller decides from readiness's facts
// as it read them (or as the review before it in the student's line left them), before it writes. The gate then
// checks, under the student's lock, that the facts are still those: the review's write commits only on facts that
// nobody changed since its decision, and a review on changed facts writes nothing and starts over.
//
// readiness_facts: what a readiness move compares, as one jsonb, in a form the caller can rebuild (every array in a
// fixed order): the upcoming exams (at most p_limit, nearest first) with their linked decks, tasks (and whether each is
// completed) and the memory of every card of the linked decks; the study days of the window from p_since in p_zone;
// the state last pushed of each exam; whether the review's local day [p_day_start, p_day_end) had study already. It is
// the second definition of db/queries/exams.ts upcomingPreparation and studyDays and db/queries/readiness.ts pushed
// (PL/pgSQL, so that the gate reads it after its locks with a fresh snapshot, and its plan is kept per session);
// test/db/queries/readiness-facts.test.ts asks both the same questions on the same data. STABLE: called from the gate,
// it reads with the snapshot of the gate's statement that calls it, taken after the locks.
//
// graded_review_gate gains the facts: `p_facts` null means the caller read none (it found readiness not following),
// and then a student readiness follows now gets nothing written, as before; facts given must equal the facts read
// under the locks, whether readiness follows the student now or not.
//
// readiness_facts keeps one generic plan per session (plan_cache_mode): every review of a student readiness follows
// runs it once or twice, and planning its sub-queries for each call's values cost more than running them.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function readiness_facts(
      p_user uuid, p_from_date date, p_limit int, p_zone text, p_since timestamptz, p_day_start timestamptz,
      p_day_end timestamptz
    ) returns jsonb
    language plpgsql stable set plan_cache_mode = force_generic_plan as $$
    begin
      return jsonb_build_object(
        'exams', (select coalesce(jsonb_agg(jsonb_build_object(
            'id', e.id, 'subject', e.subject, 'exam_date', e.exam_date,
            'decks', (select coalesce(jsonb_agg(jsonb_build_object('deck_id', l.deck_id) order by l.deck_id), '[]')
              from exam_decks as l where l.user_id = p_user and l.exam_id = e.id),
            'tasks', (select coalesce(jsonb_agg(jsonb_build_object('task_id', l.task_id,
                'completed', t.status = 'completed') order by l.task_id), '[]')
              from exam_tasks as l join tasks as t on t.id = l.task_id where l.user_id = p_user and l.exam_id = e.id),
            'cards', (select coalesce(jsonb_agg(m.card order by m.interval_days, m.last_reviewed_ms nulls first), '[]')
              from (select c.interval_days, floor(extract(epoch from c.last_reviewed_at) * 1000) as last_reviewed_ms,
                  jsonb_build_object('interval_days', c.interval_days,
                    'last_reviewed_ms', floor(extract(epoch from c.last_reviewed_at) * 1000)) as card
                from exam_decks as l join flashcard_cards as c on c.deck_id = l.deck_id
                where l.user_id = p_user and l.exam_id = e.id) as m)
          ) order by e.exam_date, e.id), '[]')
          from (select x.id, x.subject, x.exam_date from exams as x
            where x.user_id = p_user and x.exam_date >= p_from_date order by x.exam_date, x.id limit p_limit) as e),
        'study_days', (with recursive review_days(at) as (
            select (select min(r.reviewed_at) from flashcard_reviews as r
              where r.user_id = p_user and r.reviewed_at >= p_since)
            union all
            select (select min(r.reviewed_at) from flashcard_reviews as r where r.user_id = p_user
                and r.reviewed_at >= (((d.at at time zone p_zone)::date + 1)::timestamp at time zone p_zone))
              from review_days as d where d.at is not null
          )
          select count(*) from (
            select (d.at at time zone p_zone)::date as day from review_days as d where d.at is not null
            union
            select (t.completed_at at time zone p_zone)::date from tasks as t
              where t.user_id = p_user and t.status = 'completed' and t.completed_at >= p_since
          ) as days),
        'pushed', (select coalesce(jsonb_agg(jsonb_build_object('exam_id', r.exam_id, 'state', r.state)
            order by r.exam_id), '[]')
          from exam_readiness as r where r.user_id = p_user and r.state is not null),
        'day_studied', coalesce(
          (select min(r.reviewed_at) from flashcard_reviews as r
            where r.user_id = p_user and r.reviewed_at >= p_day_start) < p_day_end
          or (select min(t.completed_at) from tasks as t
            where t.user_id = p_user and t.status = 'completed' and t.completed_at >= p_day_start) < p_day_end,
          false)
      );
    end
    $$`.execute(db);
  await sql`drop function graded_review_gate(uuid, uuid, text, date, boolean, date, text[])`.execute(db);
  await sql`create function graded_review_gate(
      p_user uuid, p_card uuid, p_version text, p_day date, p_capped_sources text[], p_from_date date, p_facts jsonb,
      p_limit int, p_zone text, p_since timestamptz, p_day_start timestamptz, p_day_end timestamptz
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
      proceed := current_version is not null and (p_version is null or current_version = p_version);
      -- Facts given are checked whether or not readiness follows now: a review decided on them may record a move
      -- from them next, which facts of an exam removed meanwhile would make wrong.
      if proceed and (readiness_follows or p_facts is not null) then
        proceed := p_facts is not null;
        if proceed then
          proceed := readiness_facts(p_user, p_from_date, p_limit, p_zone, p_since, p_day_start, p_day_end) = p_facts;
        end if;
      end if;
      return next;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function graded_review_gate(uuid, uuid, text, date, text[], date, jsonb, int, text, timestamptz,
    timestamptz, timestamptz)`.execute(db);
  await sql`drop function readiness_facts(uuid, date, int, text, timestamptz, timestamptz, timestamptz)`.execute(db);
  // 20261207_0501's gate, as it was.
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
