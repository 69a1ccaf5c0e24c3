// The current student's own profile (the general surface's /api/users/me and account creation).
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { changingPrincipals } from './principal-changes.ts';
import { currentStreak } from './streak.ts';

const PROFILE_COLUMNS = [
  'id',
  'email',
  'nickname',
  'first_name',
  'avatar_url',
  'bio',
  'xp',
  'plan',
  'contract_per_minute',
  'contract_per_day',
  'contract_ai_per_hour',
  'time_zone',
  'country_code',
  'university_id',
  'updated_at',
] as const;
// Same expression as the partner surface's public profile, so both show the same date.
const joinedAt = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('joined_at');
const streak = currentStreak.as('streak');

export type ProfileRow = NonNullable<Awaited<ReturnType<typeof findProfile>>>;

export async function findProfile(db: Db, userId: string) {
  return db
    .selectFrom('users')
    .select(PROFILE_COLUMNS)
    .select([joinedAt, streak])
    .where('id', '=', userId)
    .$narrowType<{ email: string }>()
    .executeTakeFirst();
}

export interface NewAccountRow {
  /** A fixed id (the demo student's); a random one when absent. */
  id?: string;
  email: string;
  password_hash: string;
  nickname: string;
  first_name: string;
  time_zone: string;
  country_code: string | null;
}

/** Inserts the account; a taken e-mail or nickname raises the unique violation of its index. */
export async function insertAccount(db: Db, account: NewAccountRow): Promise<ProfileRow> {
  return db
    .insertInto('users')
    .values(account)
    .returning(PROFILE_COLUMNS)
    .returning([joinedAt, streak])
    .$narrowType<{ email: string }>()
    .executeTakeFirstOrThrow();
}

export type ProfileChanges = Partial<{
  nickname: string;
  first_name: string;
  avatar_url: string | null;
  bio: string;
  time_zone: string;
  country_code: string | null;
  university_id: string | null;
}>;

/** A change of time zone or country drops the account's kept principals, which carry both. */
export async function updateProfile(
  db: Db,
  userId: string,
  changes: ProfileChanges,
  now: Date,
): Promise<ProfileRow | undefined> {
  const update = (trx: Db) =>
    trx
      .updateTable('users')
      .set({ ...changes, updated_at: now })
      .where('id', '=', userId)
      .returning(PROFILE_COLUMNS)
      .returning([joinedAt, streak])
      .$narrowType<{ email: string }>()
      .executeTakeFirst();
  if (!('time_zone' in changes) && !('country_code' in changes)) return update(db);
  return changingPrincipals(db, async (trx, changed) => {
    const row = await update(trx);
    if (row) await changed(userId);
    return row;
  });
}

export async function universityExists(db: Db, universityId: string): Promise<boolean> {
  return (
    (await db.selectFrom('universities').select('id').where('id', '=', universityId).executeTakeFirst()) !== undefined
  );
}

/** Whether PostgreSQL's zone database knows the name (case-insensitively, as `at time zone` reads it). */
export async function isKnownTimeZone(db: Db, timeZone: string): Promise<boolean> {
  const row = await db
    .selectNoFrom(
      sql<boolean>`exists (select 1 from pg_timezone_names where lower(name) = lower(${timeZone}))`.as('known'),
    )
    .executeTakeFirstOrThrow();
  return row.known;
}

/** The account with this e-mail (case-insensitive), for signing in. */
export async function findCredentials(db: Db, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'password_hash'])
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}
