import { sql } from 'kysely';
import { invalidatedCache, type InvalidatedCache } from '../invalidated-cache.ts';
import { notifyOnCommit, type Notifications } from '../notifications.ts';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';

/** Notified when the universities (reference data, written by the reference seed only) change. */
export const UNIVERSITIES_CHANNEL = 'universities';

const LIST_COLUMNS = [
  'universities.id',
  'universities.name',
  'universities.short_name',
  'universities.city',
  'universities.country',
  'universities.student_count',
  'universities.is_verified',
  'universities.default_academic_system',
  'universities.default_gpa_scale',
] as const;

/**
 * Largest first; the name breaks ties so pages are stable. A page served from memory (keepUniversitiesInMemory) is
 * frozen and the same array for the same filter until the universities change, so that what is made of it can be
 * kept as long (server/http/frozen-json.ts).
 */
export async function listUniversities(
  db: Db,
  filter: { country?: string | undefined; limit: number },
): Promise<readonly ListedUniversity[]> {
  // Filtering the kept list keeps the database's order, so a page is what the query would give.
  const all = await keptUniversities(db);
  if (all) return keptPage(all, filter);
  let query = orderedUniversities(db);
  if (filter.country) query = query.where('universities.country', '=', filter.country);
  return query.limit(filter.limit).execute();
}

function orderedUniversities(db: Db) {
  return db
    .selectFrom('universities')
    .select(LIST_COLUMNS)
    .orderBy('universities.student_count', 'desc')
    .orderBy('universities.name');
}

type ListedUniversity = Awaited<ReturnType<ReturnType<typeof orderedUniversities>['execute']>>[number];
const keptLists = new WeakMap<Db, InvalidatedCache<ListedUniversity[]>>();

/** Every university in the database's order, from memory once keepUniversitiesInMemory was called for `db`; else undefined. */
async function keptUniversities(db: Db): Promise<ListedUniversity[] | undefined> {
  return keptLists.get(db)?.get('all', () => orderedUniversities(db).execute());
}

/** Pages cut from each kept list, by filter; they go with the list when a change drops it. */
const pagesOf = new WeakMap<ListedUniversity[], Map<string, readonly ListedUniversity[]>>();
/** Far more than the countries × page sizes partners ask for; any country code passes the spec, so it is bounded. */
const KEPT_PAGES = 1_000;

function keptPage(
  all: ListedUniversity[],
  filter: { country?: string | undefined; limit: number },
): readonly ListedUniversity[] {
  let pages = pagesOf.get(all);
  if (!pages) pagesOf.set(all, (pages = new Map()));
  const key = `${filter.country ?? ''}/${filter.limit}`;
  let page = pages.get(key);
  if (!page) {
    if (pages.size >= KEPT_PAGES) pages.clear();
    page = Object.freeze(
      all
        .filter((u) => !filter.country || u.country === filter.country)
        .slice(0, filter.limit)
        .map((u) => Object.freeze(u)),
    );
    pages.set(key, page);
  }
  return page;
}

/**
 * Serves listUniversities of `db` from memory from now on: a few dozen rows of reference data that partners poll,
 * read once and again after each change (notifyUniversitiesChanged), by the cache's rules (db/invalidated-cache.ts).
 */
export function keepUniversitiesInMemory(db: Db, notifications: Notifications): void {
  keptLists.set(db, invalidatedCache(notifications, UNIVERSITIES_CHANNEL, { maxEntries: 1 }));
}

/** Tells every process, when `trx` commits, that the universities changed. */
export async function notifyUniversitiesChanged(trx: Db): Promise<void> {
  await notifyOnCommit(trx, UNIVERSITIES_CHANNEL, '');
}

/** One university with its figures on the service; `activeSince` marks a student as active. */
export async function getUniversity(db: Db, id: string, activeSince: Date) {
  const [university] = await executePrepared(
    db,
    db
      .selectFrom('universities')
      .leftJoin('users', 'users.university_id', 'universities.id')
      .select(LIST_COLUMNS)
      .select(['universities.website', 'universities.founded_year'])
      .select((eb) => [
        eb.fn
          .count<number>('users.id')
          .filterWhere('users.last_active_at', '>=', activeSince)
          .as('active_students_30d'),
        sql<number>`coalesce(sum(${eb.ref('users.xp')}), 0)::int8`.as('total_xp'),
      ])
      .where('universities.id', '=', id)
      .groupBy('universities.id'),
  );
  return university;
}

/** Whether `id` is a university's: from the universities kept in memory when they are (a board's check before its query). */
export async function universityExists(db: Db, id: string): Promise<boolean> {
  const all = await keptUniversities(db);
  if (all) return all.some((university) => university.id === id);
  return (await executePrepared(db, db.selectFrom('universities').select('id').where('id', '=', id))).length > 0;
}
