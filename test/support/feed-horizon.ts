// When the changes feed lists what a student wrote. On PostgreSQL the feed lists an event once every transaction of the
// whole server that began before it has ended (other test files' too, and other databases' on a shared cluster): a
// feed, sync or token read right after a write may not have it yet, and a token taken then lies before it, so the
// answers to that token bring it again. Polling the feed for a while instead waited a fixed time, which a loaded
// server's open transactions outlast, and spent the account's request limit (429) on reads that could not be complete.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../db/connect.ts';

/**
 * Waits until the feed lists every event of the student written so far: until the oldest transaction still open on
 * the server is younger than the student's last event. However long a loaded machine takes; the test's timeout bounds
 * it. A test that holds a transaction open itself must end it first.
 */
export async function changesListed(db: Db, userId: string): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ listed: boolean }>`
      select coalesce(max(txid) < pg_snapshot_xmin(pg_current_snapshot()), true) as listed
      from events where user_id = ${userId}`.execute(db);
    if (rows[0]!.listed) return;
    await sleep(20);
  }
}
