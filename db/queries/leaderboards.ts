import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';
import { currentStreak } from './streak.ts';

/**
 * The top users by xp with competition ranks (equal xp, equal rank). Users without activity since
 * `activeSince` keep their place but lose their names: anonymity is applied here, so no name leaves the database.
 */
export async function topUsersByXp(db: Db, options: { activeSince: Date; limit: number; universityId?: string }) {
  let query = db
    .selectFrom('users')
    .select((eb) => [
      // rank() counts the rows before this one with more xp; they all come first in (xp desc, id) order, so the rank
      // computed over the first `limit` rows is the rank over all of them.
      sql<number>`rank() over (order by ${eb.ref('xp')} desc)`.as('rank'),
      eb.case().when('last_active_at', '>=', options.activeSince).then(eb.ref('nickname')).else(null).end().as('nickname'),
      eb.case().when('last_active_at', '>=', options.activeSince).then(eb.ref('first_name')).else(null).end().as('first_name'),
      'xp',
      currentStreak.as('streak'),
    ]);
  if (options.universityId) query = query.where('university_id', '=', options.universityId);
  // One level, ordered and limited where the window runs: PostgreSQL reads users_xp_idx (or users_university_xp_idx)
  // in order and stops after `limit` rows. With the window in a subquery and the limit outside it, the planner ranked
  // every user first (a sequential scan and a sort of the whole table; test/scale/query-plans.scale.ts).
  // A named prepared statement (db/prepared-statements.ts): partners poll the same few pages.
  return executePrepared(db, query.orderBy('xp', 'desc').orderBy('id').limit(options.limit));
}
