import { sql } from 'kysely';
import type { Db } from '../connect.ts';

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

/** Largest first; the name breaks ties so pages are stable. */
export async function listUniversities(db: Db, filter: { country?: string | undefined; limit: number }) {
  let query = db.selectFrom('universities').select(LIST_COLUMNS);
  if (filter.country) query = query.where('universities.country', '=', filter.country);
  return query.orderBy('universities.student_count', 'desc').orderBy('universities.name').limit(filter.limit).execute();
}

/** One university with its figures on the service; `activeSince` marks a student as active. */
export async function getUniversity(db: Db, id: string, activeSince: Date) {
  return db
    .selectFrom('universities')
    .leftJoin('users', 'users.university_id', 'universities.id')
    .select(LIST_COLUMNS)
    .select(['universities.website', 'universities.founded_year'])
    .select((eb) => [
      eb.fn.count<number>('users.id').filterWhere('users.last_active_at', '>=', activeSince).as('active_students_30d'),
      sql<number>`coalesce(sum(${eb.ref('users.xp')}), 0)::int8`.as('total_xp'),
    ])
    .where('universities.id', '=', id)
    .groupBy('universities.id')
    .executeTakeFirst();
}

export async function universityExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('universities').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
