// The gate of each webhook endpoint (services/webhooks/gate.ts): the lease of its one attempt in flight, which also
// counts towards its account's attempts in flight, and its circuit breaker. Every change to an account's gates runs
// under that account's advisory lock, so admissions and releases of one account take turns in every process.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { executePrepared } from '../prepared-statements.ts';

/** Whose endpoint it is: a student's or an app's. */
export type GateAccount = { user_id: string } | { client_id: string };

/** The account's name in its gates' rows and its lock. */
export const accountKey = (account: GateAccount) =>
  'user_id' in account ? `user:${account.user_id}` : `client:${account.client_id}`;

/** Holds the account's gates until the transaction ends (a transaction-level advisory lock: nothing to leak). */
export async function lockAccountGates(trx: Db, account: GateAccount): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-account:${accountKey(account)}`}, 0))`.execute(
    trx,
  );
}

/** The endpoint's gate, made open and idle when it has none yet. Call under lockAccountGates. */
export async function readGate(trx: Db, endpointId: string, account: GateAccount) {
  await trx
    .insertInto('webhook_endpoint_gates')
    .values({ endpoint_id: endpointId, account: accountKey(account) })
    .onConflict((oc) => oc.column('endpoint_id').doNothing())
    .execute();
  return trx
    .selectFrom('webhook_endpoint_gates')
    .select(['lease_job', 'lease_until', 'failures', 'open_until'])
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirstOrThrow();
}

/** The account's attempts in flight at `now` on endpoints other than `endpointId`, and when the first of their leases ends. */
export async function accountLeases(
  trx: Db,
  account: GateAccount,
  endpointId: string,
  now: Date,
): Promise<{ count: number; firstEnd: Date | null }> {
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
  await trx
    .updateTable('webhook_endpoint_gates')
    .set({ lease_job: jobId, lease_until: until })
    .where('endpoint_id', '=', endpointId)
    .execute();
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
  await trx
    .updateTable('webhook_endpoint_gates')
    .set({ lease_job: null, lease_until: null })
    .where('endpoint_id', '=', endpointId)
    .where('lease_job', '=', jobId)
    .execute();
  if (outcome.succeeded) {
    await trx
      .updateTable('webhook_endpoint_gates')
      .set({ failures: 0, open_until: null })
      .where('endpoint_id', '=', endpointId)
      .execute();
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
  if (openUntil)
    await trx
      .updateTable('webhook_endpoint_gates')
      .set({ open_until: openUntil })
      .where('endpoint_id', '=', endpointId)
      .execute();
  return { failures, open_until: openUntil };
}

/** Ends the lease `jobId` holds, if it still does (its job made no attempt: superseded, skipped). */
export async function releaseLease(trx: Db, endpointId: string, jobId: string): Promise<void> {
  await trx
    .updateTable('webhook_endpoint_gates')
    .set({ lease_job: null, lease_until: null })
    .where('endpoint_id', '=', endpointId)
    .where('lease_job', '=', jobId)
    .execute();
}

/** The endpoint's lease goes to `jobId` until `until` (its gate made if it has none yet). Call under lockAccountGates. */
export async function reserveEndpoint(
  trx: Db,
  endpointId: string,
  account: GateAccount,
  jobId: string,
  until: Date,
): Promise<void> {
  await trx
    .insertInto('webhook_endpoint_gates')
    .values({ endpoint_id: endpointId, account: accountKey(account), lease_job: jobId, lease_until: until })
    .onConflict((oc) => oc.column('endpoint_id').doUpdateSet({ lease_job: jobId, lease_until: until }))
    .execute();
}

/** The account's attempts in flight or given a job at `now`: its leases still live. */
export async function countAccountLeases(trx: Db, account: GateAccount, now: Date): Promise<number> {
  const row = await trx
    .selectFrom('webhook_endpoint_gates')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('account', '=', accountKey(account))
    .where('lease_until', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The account's parked deliveries that may go now: on each of its endpoints whose gate lets an attempt through at
 * `now` (no lease live, breaker closed), the delivery due longest ago; the `limit` that have waited longest.
 */
export async function runnableDeliveries(trx: Db, account: GateAccount, now: Date, limit: number) {
  const firstPerEndpoint = trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .leftJoin('webhook_endpoint_gates as g', 'g.endpoint_id', 'd.endpoint_id')
    .distinctOn('d.endpoint_id')
    .select(['d.id', 'd.endpoint_id', 'd.next_attempt_at'])
    .where(
      'user_id' in account ? 'e.user_id' : 'e.client_id',
      '=',
      'user_id' in account ? account.user_id : account.client_id,
    )
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('g.lease_until', 'is', null), eb('g.lease_until', '<=', now)]))
    .where((eb) => eb.or([eb('g.open_until', 'is', null), eb('g.open_until', '<=', now)]))
    .orderBy('d.endpoint_id')
    .orderBy('d.next_attempt_at')
    .orderBy('d.id');
  return trx
    .selectFrom(firstPerEndpoint.as('f'))
    .selectAll()
    .orderBy('f.next_attempt_at')
    .orderBy('f.id')
    .limit(limit)
    .$narrowType<{ next_attempt_at: Date }>()
    .execute();
}

/**
 * Accounts (at most `limit`) with a parked delivery that may go now: due, on an endpoint whose gate lets an attempt
 * through, while the account holds fewer than `perAccount` live leases. Read from the pending deliveries (a partial
 * index), so an account whose slots are all taken costs nothing however long its backlog. Every pass of every
 * delivering process's relay runs it: a named statement, planned once per connection (planning was most of its cost).
 */
export async function accountsWithRunnableDeliveries(
  db: Db,
  now: Date,
  perAccount: number,
  limit: number,
): Promise<GateAccount[]> {
  const rows = await executePrepared(
    db,
    sql<{ user_id: string | null; client_id: string | null }>`
    select distinct e.user_id, e.client_id
    from webhook_deliveries as d
    join webhook_endpoints as e on e.id = d.endpoint_id
    left join webhook_endpoint_gates as g on g.endpoint_id = d.endpoint_id
    where d.status = 'pending' and d.next_attempt_at <= ${now}
      and (g.lease_until is null or g.lease_until <= ${now})
      and (g.open_until is null or g.open_until <= ${now})
      and (select count(*) from webhook_endpoint_gates as l
           where l.account = case when e.user_id is not null then 'user:' || e.user_id::text else 'client:' || e.client_id::text end
             and l.lease_until > ${now}) < ${perAccount}
    limit ${limit}`,
  );
  return rows.map((row) => (row.user_id !== null ? { user_id: row.user_id } : { client_id: row.client_id! }));
}
