// `previous_attributes` of an update event: the fields whose value changed, with the value they had before.
import { isDeepStrictEqual } from 'node:util';

export function previousAttributes<T extends object, K extends keyof T>(
  before: T,
  after: T,
  fields: readonly K[],
): Partial<Pick<T, K>> {
  const previous: Partial<Pick<T, K>> = {};
  for (const field of fields) if (!isDeepStrictEqual(before[field], after[field])) previous[field] = before[field];
  return previous;
}
