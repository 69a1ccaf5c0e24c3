// Cursors over (timestamp, id) and (date, id) sort keys, checked part by part: a cursor that decodes but carries a
// non-date or non-uuid would otherwise reach PostgreSQL as a cast error, a 500 instead of the client's 400.
import { problems } from '../../server/problems.ts';
import { decodeCursor } from './cursor.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const refuse = () => problems.invalidRequest([{ path: 'query.cursor', message: 'is not a cursor this list issued' }]);

export function timeIdCursor(cursor: string | undefined): { created_at: Date; id: string } | undefined {
  const key = decodeCursor(cursor, 2);
  if (!key) return undefined;
  const [at, id] = key;
  const created_at = typeof at === 'string' ? new Date(at) : new Date(NaN);
  if (Number.isNaN(created_at.getTime()) || typeof id !== 'string' || !UUID.test(id)) throw refuse();
  return { created_at, id };
}

export function dateIdCursor(cursor: string | undefined): { date: string; id: string } | undefined {
  const key = decodeCursor(cursor, 2);
  if (!key) return undefined;
  const [date, id] = key;
  if (typeof date !== 'string' || !DATE.test(date) || Number.isNaN(Date.parse(date)) || typeof id !== 'string' || !UUID.test(id)) throw refuse();
  return { date, id };
}
