// Seeding entry points: reference data (universities, holidays) and demo data (users and their activity).
// The demo generator (faker: ~0.2 s and ~40 MB of RSS to load) is imported only when there is demo data to write,
// so that a restart, which calls seedDemo and finds its users in place (app/main.ts), never loads it.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { notifyUniversitiesChanged } from '../queries/universities.ts';
import { storeHolidays } from './holiday-store.ts';
import { universities } from './universities.ts';

export { DEMO_SEED } from './demo-seed.ts';

/** Rows per INSERT: 500 rows × ≤11 columns stays far below PostgreSQL's 65,535 bind parameters. */
const CHUNK = 500;
const HOLIDAY_COUNTRIES = ['KZ', 'RU'];

/**
 * Inserts or updates the universities and stores KZ/RU holidays for last year to two years ahead; safe to repeat.
 * A university is matched by its stable id (`reference-ids.ts`), so a renamed one keeps its id; holidays are keyed
 * by country, date and name.
 */
export async function seedReference(db: Db, opts: { now: Date }): Promise<{ universities: number; holidays: number }> {
  // Processes keep the universities in memory: they are told once this commits.
  await db.transaction().execute(async (trx) => {
    await upsertUniversities(trx);
    await notifyUniversitiesChanged(trx);
  });

  const year = opts.now.getUTCFullYear();
  const years = [year - 1, year, year + 1, year + 2];
  let holidays = 0;
  for (const country of HOLIDAY_COUNTRIES) holidays += await storeHolidays(db, country, years);
  return { universities: universities.length, holidays };
}

async function upsertUniversities(db: Db): Promise<void> {
  await db
    .insertInto('universities')
    .values([...universities])
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({
        name: (eb) => eb.ref('excluded.name'),
        country: (eb) => eb.ref('excluded.country'),
        short_name: (eb) => eb.ref('excluded.short_name'),
        city: (eb) => eb.ref('excluded.city'),
        student_count: (eb) => eb.ref('excluded.student_count'),
        is_verified: (eb) => eb.ref('excluded.is_verified'),
        default_academic_system: (eb) => eb.ref('excluded.default_academic_system'),
        default_gpa_scale: (eb) => eb.ref('excluded.default_gpa_scale'),
        website: (eb) => eb.ref('excluded.website'),
        founded_year: (eb) => eb.ref('excluded.founded_year'),
      }),
    )
    .execute();
}

/**
 * Inserts demo users and their decks, tutor messages and study rooms in one transaction. Does nothing when any
 * user exists, so it can run at every start; the lock makes two concurrent starts insert the demo once.
 */
export async function seedDemo(
  db: Db,
  opts: { seed: number; now: Date; userCount?: number },
): Promise<{ users: number; decks: number; aiMessages: number; studyRooms: number }> {
  return db.transaction().execute(async (trx) => {
    await sql`lock table users in share row exclusive mode`.execute(trx);
    if (await trx.selectFrom('users').select('id').limit(1).executeTakeFirst())
      return { users: 0, decks: 0, aiMessages: 0, studyRooms: 0 };

    const { generateDemoData } = await import('./demo.ts');
    const universityIds = (
      await trx.selectFrom('universities').select('id').orderBy('name').orderBy('country').execute()
    ).map((u) => u.id);
    const data = generateDemoData({ ...opts, universityIds });
    for (const rows of chunks(data.users)) await trx.insertInto('users').values(rows).execute();
    for (const rows of chunks(data.decks)) await trx.insertInto('flashcard_decks').values(rows).execute();
    for (const rows of chunks(data.aiMessages)) await trx.insertInto('ai_messages').values(rows).execute();
    for (const rows of chunks(data.studyRooms)) await trx.insertInto('study_rooms').values(rows).execute();
    return {
      users: data.users.length,
      decks: data.decks.length,
      aiMessages: data.aiMessages.length,
      studyRooms: data.studyRooms.length,
    };
  });
}

/** True before the first reference seed: there are no universities. */
export async function isEmpty(db: Db): Promise<boolean> {
  return (await db.selectFrom('universities').select('id').limit(1).executeTakeFirst()) === undefined;
}

function* chunks<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += CHUNK) yield rows.slice(i, i + CHUNK);
}
