// The delivering processes live on the database and their delivery settings (table webhook_delivery_processes; its
// migration says why). Joining is one transaction under an advisory lock, so two processes starting at once with
// different settings cannot both find the other absent.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

export type DeliverySettings = Record<string, string>;

/**
 * Registers process `id` with `settings` until `liveUntil`, unless a live process has other settings: then nothing is
 * written and those settings are returned (the first found), with how many live processes hold them.
 */
export async function joinDeliveryProcesses(
  db: Db,
  process: { id: string; settings: DeliverySettings; now: Date; liveUntil: Date },
): Promise<{ joined: true } | { joined: false; theirs: DeliverySettings; processes: number }> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended('webhook-delivery-processes', 0))`.execute(trx);
    await trx.deleteFrom('webhook_delivery_processes').where('live_until', '<=', process.now).execute();
    const live = await trx.selectFrom('webhook_delivery_processes').select('settings').execute();
    const mine = JSON.stringify(sorted(process.settings));
    const others = live.filter((row) => JSON.stringify(sorted(row.settings)) !== mine);
    if (others.length > 0) return { joined: false as const, theirs: others[0]!.settings, processes: others.length };
    await trx
      .insertInto('webhook_delivery_processes')
      .values({ id: process.id, settings: mine, started_at: process.now, live_until: process.liveUntil })
      .execute();
    return { joined: true as const };
  });
}

/** Keeps process `id` live until `liveUntil` (registered again if its row was dropped meanwhile). */
export async function renewDeliveryProcess(
  db: Db,
  process: { id: string; settings: DeliverySettings; now: Date; liveUntil: Date },
): Promise<void> {
  const settings = JSON.stringify(sorted(process.settings));
  await db
    .insertInto('webhook_delivery_processes')
    .values({ id: process.id, settings, started_at: process.now, live_until: process.liveUntil })
    .onConflict((oc) => oc.column('id').doUpdateSet({ live_until: process.liveUntil }))
    .execute();
}

export async function leaveDeliveryProcesses(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_delivery_processes').where('id', '=', id).execute();
}

function sorted(settings: DeliverySettings): DeliverySettings {
  return Object.fromEntries(Object.entries(settings).sort(([a], [b]) => a.localeCompare(b)));
}
