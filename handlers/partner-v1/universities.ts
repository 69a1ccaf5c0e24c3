import * as queries from '../../db/queries/universities.ts';
import { problems } from '../../server/http/problems.ts';
import { activeSince } from './activity.ts';
import type { PartnerHandlers, Schemas } from './types.ts';

type UniversityRow = Awaited<ReturnType<typeof queries.listUniversities>>[number];

/** The one place where a stored university and the API's differ: `country_code` is the lower-case twin. */
function toUniversity(row: UniversityRow): Schemas['University'] {
  return {
    ...row,
    country_code: row.country.toLowerCase(),
    default_academic_system: row.default_academic_system as Schemas['AcademicSystem'],
    default_gpa_scale: row.default_gpa_scale as Schemas['GpaScale'],
  };
}

/** Pages mapped once from the frozen pages the query keeps (until the universities change), frozen in turn. */
const mappedPages = new WeakMap<readonly UniversityRow[], Schemas['University'][]>();

export const listUniversities: PartnerHandlers['listUniversities'] = async ({ query }, { db }) => {
  const rows = await queries.listUniversities(db, { country: query.country_code?.toUpperCase(), limit: query.limit });
  if (!Object.isFrozen(rows)) return { status: 200, body: rows.map(toUniversity) };
  let body = mappedPages.get(rows);
  if (!body) {
    // Frozen: sent as bytes serialized once (server/http/frozen-json.ts).
    body = Object.freeze(rows.map((row) => Object.freeze(toUniversity(row)))) as Schemas['University'][];
    mappedPages.set(rows, body);
  }
  return { status: 200, body };
};

export const getUniversity: PartnerHandlers['getUniversity'] = async ({ path }, { db, now }) => {
  const row = await queries.getUniversity(db, path.uni_id, activeSince(now()));
  if (!row) throw problems.notFound(`No university has id ${path.uni_id}.`);
  const { website, founded_year, active_students_30d, total_xp, ...listed } = row;
  return { status: 200, body: { ...toUniversity(listed), website, founded_year, active_students_30d, total_xp } };
};
