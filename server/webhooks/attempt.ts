// One attempt of a delivery, run by the job that scheduled it (worker.ts): load the delivery with its event and
// endpoint, skip it if the endpoint was disabled or the app's grant no longer covers the event, pass the endpoint's
// gate (gate.ts: one attempt in flight per endpoint and a few per account, a circuit breaker; a job held back is
// postponed), send it, and record the outcome in one transaction — the attempt row, the delivery's new state, the
// endpoint's run of failures and its gate, the job of the next attempt, the job of the delivery this attempt hands
// its place to, and the completion of this job. The record is made only while this job is still active, so an
// attempt is recorded once even if a stalled process wakes up after pg-boss gave its job to another worker.
import type { Db } from '../../db/connect.ts';
import { jobEngine, WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import { lockAccountGates } from '../../db/queries/endpoint-gates.ts';
import {
  appMayReceive,
  attemptStillDue,
  clearEndpointFailing,
  disableFailingEndpoint,
  countAttempt,
  findDeliveryForAttempt,
  finishDelivery,
  insertAttempt,
  markEndpointFailing,
} from '../../db/queries/deliveries.ts';
import type { WebhookConfig } from '../config.ts';
import { envelopeOf, type EventType } from '../events/emit.ts';
import { countDeliveryAttempt, observeWebhookAttempt, type DeliveryOutcome } from '../metrics.ts';
import type { SecretBox } from '../secret-box.ts';
import { readScopeOf } from '../events/read-scopes.ts';
import { accountOf, admitAttempt, settleAttempt, type DeliveryLimits, type GateRefusal } from './gate.ts';
import { endpointFailingTooLong, retryDelayMs } from './retry-schedule.ts';
import { signingSecrets } from './secrets.ts';
import { scheduleAttempt } from './queue.ts';
import { sendWebhook } from './send.ts';

export interface AttemptContext {
  db: Db;
  box: SecretBox;
  config: WebhookConfig;
  limits: DeliveryLimits;
  /** How long an admitted attempt holds its endpoint's lease: longer than the attempt, shorter than its job's expiry. */
  leaseMs: number;
  now?: () => Date;
}

/** The job of an attempt: its id, the delivery, and the next_attempt_at it was scheduled for. */
export interface AttemptRun {
  jobId: string;
  deliveryId: string;
  due: Date;
}

/**
 * What became of the attempt's job: an outcome of an attempt; 'superseded' when the delivery no longer waits for it
 * (re-sent, retried or given up since); a GateRefusal when the endpoint's gate held it back (postponed); 'lost'
 * when pg-boss no longer counted the job as this worker's.
 */
export type AttemptResult = DeliveryOutcome | GateRefusal | 'superseded' | 'lost';

/** Jobs held back by an open breaker start spread over this much after it closes, not in one burst. */
const POSTPONE_SPREAD_MS = 1_000;

export async function attemptDelivery(context: AttemptContext, run: AttemptRun): Promise<AttemptResult> {
  const { db, config } = context;
  const now = context.now ?? (() => new Date());
  const delivery = await findDeliveryForAttempt(db, run.deliveryId);
  if (!delivery || delivery.status !== 'pending' || delivery.next_attempt_at?.getTime() !== run.due.getTime()) return 'superseded';
  const attempt = { id: delivery.id, due: run.due };

  const covered =
    delivery.enabled &&
    (delivery.endpoint_client_id === null || (await appMayReceive(db, delivery.endpoint_client_id, delivery.event_user_id, readScopeOf(delivery.event_type as EventType))));
  if (!covered) {
    const skipped = await db.transaction().execute(async (trx): Promise<AttemptResult> => {
      if (!(await completeJob(trx, run.jobId))) return 'lost';
      await finishDelivery(trx, attempt, { status: 'failed', next_attempt_at: null, succeeded_at: null });
      return 'skipped';
    });
    return count(skipped);
  }

  const account = accountOf(delivery);
  const admission = await db.transaction().execute(async (trx) => {
    // Read again under the account's lock: another job of this delivery (a hand-over, a re-send) may have made the
    // attempt since the read above, and released the endpoint's lease in the transaction that recorded it.
    await lockAccountGates(trx, account);
    if (!(await attemptStillDue(trx, delivery.id, run.due))) return 'superseded' as const;
    const verdict = await admitAttempt(trx, { endpointId: delivery.endpoint_id, account, jobId: run.jobId, now: now(), leaseMs: context.leaseMs, limits: context.limits });
    if (verdict.admitted) return verdict;
    // Postponed: this job completes and the same attempt (same `due`) starts when the gate may let it through.
    if (!(await completeJob(trx, run.jobId))) return 'lost' as const;
    const jitterMs = verdict.reason === 'circuit_open' ? Math.random() * POSTPONE_SPREAD_MS : 0;
    await scheduleAttempt(trx, delivery.id, run.due, { startAfter: new Date(verdict.until.getTime() + jitterMs) });
    return verdict;
  });
  if (admission === 'lost' || admission === 'superseded') return admission;
  if (!admission.admitted) return admission.reason;

  const startedAt = now();
  const payload = JSON.stringify(
    envelopeOf({ id: delivery.event_id, type: delivery.event_type, user_id: delivery.event_user_id, data: delivery.event_data, created_at: delivery.event_created_at }),
  );
  const response = await sendWebhook({
    url: delivery.url,
    id: delivery.event_id,
    payload,
    secrets: signingSecrets(context.box, { ...delivery, id: delivery.endpoint_id }, startedAt),
    timeoutMs: config.attemptTimeoutMs,
    allowPrivate: config.allowPrivateTargets,
    now: startedAt,
  });
  observeWebhookAttempt(response.durationMs, response.status);
  const succeeded = response.status !== null && response.status >= 200 && response.status < 300;

  const outcome = await db.transaction().execute(async (trx): Promise<AttemptResult> => {
    if (!(await completeJob(trx, run.jobId))) return 'lost';
    const finishedAt = now();
    // The gate first: its account lock comes before any row this transaction locks, as in admitAttempt.
    const gate = await settleAttempt(trx, {
      endpointId: delivery.endpoint_id,
      account,
      jobId: run.jobId,
      deliveryId: delivery.id,
      succeeded,
      now: finishedAt,
      limits: context.limits,
      scale: config.retryScale,
    });
    // The place this attempt held goes to the account's delivery that has waited longest (its own job, if it was
    // postponed, finds it attempted and stands down).
    if (gate.next) await scheduleAttempt(trx, gate.next.id, gate.next.next_attempt_at);
    await insertAttempt(trx, { delivery_id: delivery.id, started_at: startedAt, duration_ms: response.durationMs, response_status: response.status, error: response.error });
    await countAttempt(trx, delivery.id, startedAt);
    const delay = succeeded ? undefined : retryDelayMs(delivery.attempts + 1, config.retryScale);
    const result: DeliveryOutcome = succeeded ? 'succeeded' : delay === undefined ? 'failed' : 'retrying';
    const next = delay === undefined ? null : new Date(finishedAt.getTime() + delay);
    const current = await finishDelivery(trx, attempt, { status: result === 'retrying' ? 'pending' : result, next_attempt_at: next, succeeded_at: succeeded ? finishedAt : null });
    if (current && next) await scheduleAttempt(trx, delivery.id, next, { startAfter: next });
    if (succeeded) {
      await clearEndpointFailing(trx, delivery.endpoint_id);
    } else {
      const failingSince = await markEndpointFailing(trx, delivery.endpoint_id, startedAt);
      if (endpointFailingTooLong(failingSince, finishedAt, config.retryScale)) {
        await disableFailingEndpoint(trx, delivery.endpoint_id, finishedAt);
        return 'failed';
      }
    }
    return result;
  });
  return count(outcome);
}

/** Completes the job in `trx` (pg-boss's own completion after the handler then finds it done); false if it was no longer active. */
async function completeJob(trx: Db, jobId: string): Promise<boolean> {
  // pg-boss 10 resolves with { affected } although its types say void.
  const result = (await jobEngine(trx).complete(WEBHOOK_DELIVERY_QUEUE, jobId)) as unknown as { affected: number };
  return result.affected === 1;
}

function count(result: AttemptResult): AttemptResult {
  if (result === 'succeeded' || result === 'retrying' || result === 'failed' || result === 'skipped') countDeliveryAttempt(result);
  return result;
}
