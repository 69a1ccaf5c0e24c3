// Warnings operators give students: written by the CLI, read on the student's profile.
import type { Db } from '../connect.ts';

const WARNING_COLUMNS = ['id', 'reason', 'created_at'] as const;

export async function insertWarning(trx: Db, warning: { user_id: string; reason: string; created_at: Date }) {
  return trx.insertInto('warnings').values(warning).returning(WARNING_COLUMNS).executeTakeFirstOrThrow();
}

/** The student's newest warnings first, at most `limit`. */
export async function listRecentWarnings(db: Db, userId: string, limit: number) {
  return db
    .selectFrom('warnings')
    .select(WARNING_COLUMNS)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
