// The gate of each webhook endpoint (server/webhooks/gate.ts): the lease of its one attempt in flight, which also
// counts towards its account's attempts in flight, and its circuit breaker. Every change to an account's gates runs
// under that account's advisory lock, so admissions and releases of one account take turns in every process.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';

/** Whose endpoint it is: a student's or an app's. */
export type GateAccount = { user_id: string } | { client_id: string };

const accountKey = (account: GateAccount) => ('user_id' in account ? `user:${account.user_id}` : `client:${account.client_id}`);

/** Holds the account's gates until the transaction ends (a transaction-level advisory lock: nothing to leak). */
export async function lockAccountGates(trx: Db, account: GateAccount): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-account:${accountKey(account)}`}, 0))`.execute(trx);
}

/** The endpoint's gate, made open and idle when it has none yet. Call under lockAccountGates. */
export async function readGate(trx: Db, endpointId: string, account: GateAccount) {
  await trx.insertInto('webhook_endpoint_gates').values({ endpoint_id: endpointId, account: accountKey(account) }).onConflict((oc) => oc.column('endpoint_id').doNothing()).execute();
  return trx.selectFrom('webhook_endpoint_gates').select(['lease_job', 'lease_until', 'failures', 'open_until']).where('endpoint_id', '=', endpointId).executeTakeFirstOrThrow();
}

/** The account's attempts in flight at `now` on endpoints other than `endpointId`, and when the first of their leases ends. */
export async function accountLeases(trx: Db, account: GateAccount, endpointId: string, now: Date): Promise<{ count: number; firstEnd: Date | null }> {
  const row = await trx
    .selectFrom('webhook_endpoint_gates')
    .select((eb) => [eb.fn.countAll<string | number>().as('count'), eb.fn.min('lease_until').as('first_end')])
    .where('account', '=', accountKey(account))
    .where('lease_until', '>', now)
    .where('endpoint_id', '<>', endpointId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), firstEnd: row.first_end ? new Date(row.first_end as Date | string) : null };
}

export async function takeLease(trx: Db, endpointId: string, jobId: string, until: Date): Promise<void> {
  await trx.updateTable('webhook_endpoint_gates').set({ lease_job: jobId, lease_until: until }).where('endpoint_id', '=', endpointId).execute();
}

/**
 * Ends the lease `jobId` holds (if it still does) and records the attempt in the breaker: a success clears the run
 * of failures and closes it; a failure lengthens the run, and `openUntil(failures)` says until when it opens (null:
 * it stays closed). Returns the run of failures and the breaker's new `open_until`.
 */
export async function settleGate(
  trx: Db,
  endpointId: string,
  jobId: string,
  outcome: { succeeded: boolean; openUntil: (failures: number) => Date | null },
): Promise<{ failures: number; open_until: Date | null }> {
  await trx.updateTable('webhook_endpoint_gates').set({ lease_job: null, lease_until: null }).where('endpoint_id', '=', endpointId).where('lease_job', '=', jobId).execute();
  if (outcome.succeeded) {
    await trx.updateTable('webhook_endpoint_gates').set({ failures: 0, open_until: null }).where('endpoint_id', '=', endpointId).execute();
    return { failures: 0, open_until: null };
  }
  const row = await trx
    .updateTable('webhook_endpoint_gates')
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('endpoint_id', '=', endpointId)
    .returning('failures')
    .executeTakeFirst();
  const failures = row?.failures ?? 0;
  const openUntil = outcome.openUntil(failures);
  if (openUntil) await trx.updateTable('webhook_endpoint_gates').set({ open_until: openUntil }).where('endpoint_id', '=', endpointId).execute();
  return { failures, open_until: openUntil };
}

/**
 * The account's delivery that has waited longest for an attempt now due, on an endpoint whose gate would let it
 * through at `now` (no attempt in flight, breaker closed), other than `exceptDeliveryId`: the one an attempt that
 * ends hands its place to.
 */
export async function longestWaitingDelivery(trx: Db, account: GateAccount, exceptDeliveryId: string, now: Date) {
  return trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .leftJoin('webhook_endpoint_gates as g', 'g.endpoint_id', 'd.endpoint_id')
    .select(['d.id', 'd.next_attempt_at'])
    .where('user_id' in account ? 'e.user_id' : 'e.client_id', '=', 'user_id' in account ? account.user_id : account.client_id)
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where('d.id', '<>', exceptDeliveryId)
    .where((eb) => eb.or([eb('g.lease_until', 'is', null), eb('g.lease_until', '<=', now)]))
    .where((eb) => eb.or([eb('g.open_until', 'is', null), eb('g.open_until', '<=', now)]))
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .limit(1)
    .$narrowType<{ next_attempt_at: Date }>()
    .executeTakeFirst();
}
