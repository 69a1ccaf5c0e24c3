// Opaque pagination cursors: the sort key of the last item of a page, as base64url JSON. A cursor is checked part
// by part when it is read: one that does not decode, or that carries a non-date or non-uuid, would otherwise reach
// PostgreSQL as a cast error, a 500 instead of the client's 400.
import { isCalendarDate, isInstant } from './formats.ts';
import { InputError } from '../../domain/errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An xid8 in decimal, up to 19 digits: beyond any real transaction count, and never a value PostgreSQL refuses (a 500). */
const XID8 = /^(0|[1-9][0-9]{0,18})$/;

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Splits a page fetched with one extra row into the page and its continuation. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly (string | number)[]) {
  const has_more = rows.length > limit;
  const data = has_more ? rows.slice(0, limit) : rows;
  const last = data.at(-1);
  return { data, has_more, next_cursor: has_more && last ? encodeCursor(keyOf(last)) : null };
}

/** The key of a cursor over a (timestamp, id) sort key, e.g. (created_at, id) or (due_at, id). */
export function timeIdCursor(cursor: string | undefined): { at: Date; id: string } | undefined {
  const key = decodeCursor(cursor);
  if (!key) return undefined;
  const [at, id] = key;
  // The same check as a date-time in a request: a year 0 or 10000 would reach PostgreSQL (a 500) or be echoed as
  // +010000.
  if (typeof at !== 'string' || !isInstant(at) || typeof id !== 'string' || !UUID.test(id)) throw notACursor();
  return { at: new Date(at), id };
}

/** The key of a cursor over a (date, id) sort key. */
export function dateIdCursor(cursor: string | undefined): { date: string; id: string } | undefined {
  const key = decodeCursor(cursor);
  if (!key) return undefined;
  const [date, id] = key;
  // A calendar check, not Date.parse: V8 reads 2026-02-30 as 2 March, PostgreSQL refuses it (and the year 0).
  if (typeof date !== 'string' || !isCalendarDate(date) || typeof id !== 'string' || !UUID.test(id)) throw notACursor();
  return { date, id };
}

/**
 * The key of a changes-feed cursor: when it was issued (for its expiry) and its place, a transaction id (xid8, a
 * decimal string) and a row of that transaction.
 */
export function feedCursor(cursor: string | undefined): { at: Date; txid: string; seq: number } | undefined {
  const key = decodeCursor(cursor, 3);
  if (!key) return undefined;
  const [at, txid, seq] = key;
  if (
    typeof at !== 'string' ||
    !isInstant(at) ||
    typeof txid !== 'string' ||
    !XID8.test(txid) ||
    !Number.isSafeInteger(seq) ||
    (seq as number) < 0
  )
    throw notACursor();
  return { at: new Date(at), txid, seq: seq as number };
}

/** The key a cursor carries, of `parts` parts; anything else is the client's error. */
function decodeCursor(cursor: string | undefined, parts = 2): unknown[] | undefined {
  if (cursor === undefined) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(key) && key.length === parts) return key;
  } catch {
    // fall through to the 400
  }
  throw notACursor();
}

/** The 400 of a cursor the list could not have issued. */
export function notACursor() {
  return new InputError([{ path: 'query.cursor', message: 'is not a cursor this list issued' }]);
}
