// Frozen in time: a migration never imports application code, so it runs the same forever.
// A version of each student's readiness facts (readiness_facts, 20261207_0601: her upcoming exams with their deck and
// task links, those tasks' completion, the memory of the linked decks' cards, the study days from her reviews and
// completed tasks, the states last pushed), moved by every write of them in that write's transaction. A graded review
// decided on facts read (or kept from her last review) at a version is written only while the version is the same:
// the gate compares one number under the student's lock, where it read and compared the whole facts before.
//
// Triggers move it, so that every writer does, whatever path it came by (the API, the sync's push, the CLI, a cascade
// from a deck, an exam or a task removed, psql): a BEFORE row trigger on each table the facts read, for the columns
// they read. A transaction moves a student's version once: the move notes the student in a transaction-local setting,
// and each trigger's WHEN skips a row of the student noted (a bulk write calls the function once, not once a row). A
// move that the transaction rolls back takes the setting back with it. A transaction that moves several students in
// turn may move one of them twice, which is only a second number.
//
// readiness_facts_moved(student): counts her version up and returns it (her row locked to the commit, so the writes of
// her facts commit one version after another); a student without a row yet (none before her first move) is at 0. A
// student being deleted gets none: her cascade's triggers find no users row to refer to.
//
// graded_review_gate compares `p_facts_version` (null: the caller read no facts, as `p_facts` null was) instead of the
// facts, and moves the version itself when it lets the writes run, returning the new one: the review's own writes (the
// card, its log) then find the student noted, and its caller keeps the facts after its review under that version.
// The facts' window (limit, zone, since, the day's bounds) leaves its parameters: the gate no longer reads them.
//
// Except for a student with no exam at all and no state pushed (most reviews of most students): facts are read only
// while readiness follows her (an exam from the reader's today on, or a state pushed), and whatever took the last of
// them away moved her version; so no process holds facts at her version now, and no reader can get facts at it before
// an exam or a state comes, which moves it again. The gate then notes her without moving it (its transaction's
// triggers skip her as after a move): the review costs no write of the version, and returns none.
import { sql, type Kysely } from 'kysely';

/** The tables readiness_facts reads, and the columns of each whose change moves the facts. */
const FACT_TABLES: Record<string, string[]> = {
  exams: ['id', 'user_id', 'subject', 'exam_date'],
  exam_decks: ['exam_id', 'deck_id', 'user_id'],
  exam_tasks: ['exam_id', 'task_id', 'user_id'],
  tasks: ['id', 'user_id', 'status', 'completed_at'],
  flashcard_cards: ['deck_id', 'user_id', 'interval_days', 'last_reviewed_at'],
  flashcard_reviews: ['user_id', 'reviewed_at'],
  exam_readiness: ['exam_id', 'user_id', 'state'],
};

/** Rows inserted or deleted that the facts never count: a task that is not completed (its link, if any, counts). */
const COUNTED_ROWS: Record<string, { insert?: string; delete?: string }> = {
  tasks: { insert: `new.status = 'completed'`, delete: `old.status = 'completed'` },
};

const NOTED = `current_setting('study_companion.readiness_facts_moved', true)`;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('readiness_fact_versions')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create function readiness_facts_moved(p_user uuid) returns bigint
    language plpgsql volatile as $$
    declare
      moved bigint;
    begin
      update readiness_fact_versions set version = version + 1 where user_id = p_user returning version into moved;
      if not found then
        insert into readiness_fact_versions (user_id, version)
          select p_user, 1 where exists (select from users where id = p_user)
          on conflict (user_id) do update set version = readiness_fact_versions.version + 1
          returning version into moved;
      end if;
      perform set_config('study_companion.readiness_facts_moved', p_user::text, true);
      return moved;
    end
    $$`.execute(db);
  await sql`create function readiness_facts_written() returns trigger
    language plpgsql as $$
    begin
      if tg_op <> 'INSERT' then
        perform readiness_facts_moved(old.user_id);
      end if;
      if tg_op = 'INSERT' or (tg_op = 'UPDATE' and new.user_id is distinct from old.user_id) then
        perform readiness_facts_moved(new.user_id);
      end if;
      if tg_op = 'DELETE' then
        return old;
      end if;
      return new;
    end
    $$`.execute(db);
  for (const [table, columns] of Object.entries(FACT_TABLES)) {
    const counted = COUNTED_ROWS[table] ?? {};
    const old = columns.map((column) => `old.${column}`).join(', ');
    const changed = columns.map((column) => `new.${column}`).join(', ');
    const triggers = [
      ['insert', 'insert', `${NOTED} is distinct from new.user_id::text`, counted.insert],
      ['delete', 'delete', `${NOTED} is distinct from old.user_id::text`, counted.delete],
      [
        'update',
        `update of ${columns.join(', ')}`,
        `(${old}) is distinct from (${changed})
          and (${NOTED} is distinct from new.user_id::text or old.user_id is distinct from new.user_id)`,
        undefined,
      ],
    ] as const;
    for (const [name, event, when, rows] of triggers) {
      const condition = rows ? `${rows} and ${when}` : when;
      await sql
        .raw(
          `create trigger ${table}_facts_${name} before ${event} on ${table} for each row when (${condition})
            execute function readiness_facts_written()`,
        )
        .execute(db);
    }
  }
  await sql`drop function graded_review_gate(uuid, uuid, text, date, text[], date, jsonb, int, text, timestamptz,
    timestamptz, timestamptz)`.execute(db);
  await sql`create function graded_review_gate(
      p_user uuid, p_card uuid, p_version text, p_day date, p_capped_sources text[], p_from_date date,
      p_facts_version bigint
    ) returns table (proceed boolean, readiness_follows boolean, capped_earned int, facts_version bigint)
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
      if proceed and (readiness_follows or p_facts_version is not null) then
        proceed := coalesce(p_facts_version = coalesce(
          (select v.version from readiness_fact_versions as v where v.user_id = p_user), 0), false);
      end if;
      if proceed then
        if readiness_follows or p_facts_version is not null
            or exists (select from exams as e where e.user_id = p_user) then
          facts_version := readiness_facts_moved(p_user);
        else
          -- No exam at all and no state pushed: nobody holds facts at her version (facts are read only while one
          -- of them is there, and their going moved it), so this review and the rest of its transaction need not.
          perform set_config('study_companion.readiness_facts_moved', p_user::text, true);
        end if;
      end if;
      return next;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function graded_review_gate(uuid, uuid, text, date, text[], date, bigint)`.execute(db);
  for (const table of Object.keys(FACT_TABLES)) {
    for (const name of ['insert', 'delete', 'update'])
      await sql.raw(`drop trigger ${table}_facts_${name} on ${table}`).execute(db);
  }
  await sql`drop function readiness_facts_written()`.execute(db);
  await sql`drop function readiness_facts_moved(uuid)`.execute(db);
  await db.schema.dropTable('readiness_fact_versions').execute();
  // 20261207_0601's gate, as it was.
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
