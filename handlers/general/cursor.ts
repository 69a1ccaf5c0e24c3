// Opaque pagination cursors: the sort key of the last item of a page, as base64url JSON. A cursor that does not
// decode to the expected shape is the client's error (400), never a 500.
import { problems } from '../../server/problems.ts';

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The key a cursor carries, checked to be `length` strings or numbers. */
export function decodeCursor(cursor: string | undefined, length: number): (string | number)[] | undefined {
  if (cursor === undefined) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(key) && key.length === length && key.every((part) => typeof part === 'string' || typeof part === 'number')) return key;
  } catch {
    // fall through to the 400
  }
  throw problems.invalidRequest([{ path: 'query.cursor', message: 'is not a cursor this list issued' }]);
}

/** Splits a page fetched with one extra row into the page and its continuation. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly (string | number)[]) {
  const has_more = rows.length > limit;
  const data = has_more ? rows.slice(0, limit) : rows;
  const last = data.at(-1);
  return { data, has_more, next_cursor: has_more && last ? encodeCursor(keyOf(last)) : null };
}
