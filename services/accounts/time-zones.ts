// A student's time zone is read by two zone databases: the runtime's (Intl, through luxon) for local days in the
// handlers, and PostgreSQL's for local dates in queries (the streak, study days, the schedule). A name must be known
// to both: one only Intl knows (US/Pacific-New, dropped from tzdata in 2020) would be stored, then fail every query
// that reads it — the profile and the partner leaderboards included — as a 500. The schema cannot express either check.
import type { Db } from '../../db/connect.ts';
import { isKnownTimeZone } from '../../db/queries/profile.ts';
import { InputError } from '../../domain/errors.ts';

/** Whether both zone databases know the name. */
export async function knownTimeZone(db: Db, timeZone: string): Promise<boolean> {
  return intlKnows(timeZone) && (await isKnownTimeZone(db, timeZone));
}

export async function assertTimeZone(db: Db, timeZone: string | undefined, path: string): Promise<void> {
  if (timeZone === undefined || (await knownTimeZone(db, timeZone))) return;
  throw new InputError([{ path, message: `is not an IANA time zone name (e.g. Asia/Almaty), got "${timeZone}"` }]);
}

function intlKnows(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}
