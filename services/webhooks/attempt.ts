// One attempt of a delivery, run by the job that dispatched it (queue.ts): load the delivery with its event and
// endpoint; under the account's lock, skip it if the endpoint was disabled or the app's grant no longer covers the
// event, and pass the endpoint's gate (gate.ts: the job normally holds the endpoint's lease already; a job held
// back makes no attempt and leaves its delivery parked); send it, and record the outcome in one transaction — the
// attempt row, the delivery's new state (a retry stays parked until it is due), the endpoint's run of failures and
// its gate, the jobs of the account's parked deliveries that may go now that this one ended, and the completion of
// this job. The record is made only while this job is still active, so an attempt is recorded once even if a
// stalled process wakes up after pg-boss gave its job to another worker.
import type { Db } from '../../db/connect.ts';
import { jobEngine, WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import { accountKey, lockAccountGates, releaseLease } from '../../db/queries/endpoint-gates.ts';
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
import type { WebhookConfig } from './delivery-config.ts';
import { envelopeOf, type EventType } from '../events/emit.ts';
import { countDeliveryAttempt, observeWebhookAttempt, type DeliveryOutcome } from '../../server/process/metrics.ts';
import type { SecretBox } from '../../server/auth/secret-box.ts';
import type { KeyedLine } from '../leases/keyed-line.ts';
import { readScopeOf } from '../events/read-scopes.ts';
import { accountOf, admitAttempt, settleAttempt, type DeliveryLimits, type GateRefusal } from './gate.ts';
import { endpointFailingTooLong, retryDelayMs } from './retry-schedule.ts';
import { signingSecrets } from './secrets.ts';
import { dispatchAccount } from './queue.ts';
import type { PoolShare } from './pool-share.ts';
import { sendWebhook } from './send.ts';

export interface AttemptContext {
  db: Db;
  box: SecretBox;
  config: WebhookConfig;
  limits: DeliveryLimits;
  /** How long an admitted attempt holds its endpoint's lease: longer than the attempt, shorter than its job's expiry. */
  leaseMs: number;
  /**
   * This process's line per account: the attempt's transactions run one account at a time (they take the account's
   * lock first, so two of one account would wait for each other anyway), so that a wave of one account's attempts
   * starting or ending together waits in memory and holds one pooled connection, not one each.
   */
  accountLine: KeyedLine;
  /** Then within the attempts' share of the pool (pool-share.ts). */
  share: PoolShare;
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
 * (re-sent, retried or given up since); a GateRefusal when the endpoint's gate held it back (its delivery parked);
 * 'lost' when pg-boss no longer counted the job as this worker's.
 */
export type AttemptResult = DeliveryOutcome | GateRefusal | 'superseded' | 'lost';

export async function attemptDelivery(context: AttemptContext, run: AttemptRun): Promise<AttemptResult> {
  const { db, config } = context;
  const now = context.now ?? (() => new Date());
  const delivery = await findDeliveryForAttempt(db, run.deliveryId);
  // Deleted with its endpoint, whose gate went with it.
  if (!delivery) return 'superseded';
  const attempt = { id: delivery.id, due: run.due };
  const account = accountOf(delivery);
  const dispatch = () => ({ limits: context.limits, leaseMs: context.leaseMs, now: now() });
  // Never refused: the line holds at most this process's attempts, fewer than its bound (worker.ts).
  const inLine = <T>(work: () => Promise<T>) =>
    context.accountLine.tryRun(accountKey(account), () => context.share(work))!;

  const admission = await inLine(() =>
    db.transaction().execute(async (trx) => {
      // Read under the account's lock: another job of this delivery (a re-send's, or one given back by pg-boss) may
      // have made the attempt since, and released the endpoint's lease in the transaction that recorded it.
      await lockAccountGates(trx, account);
      const due = await attemptStillDue(trx, delivery.id, run.due);
      const covered =
        due &&
        delivery.enabled &&
        (delivery.endpoint_client_id === null ||
          (await appMayReceive(
            trx,
            delivery.endpoint_client_id,
            delivery.event_user_id,
            readScopeOf(delivery.event_type as EventType),
          )));
      if (covered) {
        const verdict = await admitAttempt(trx, {
          endpointId: delivery.endpoint_id,
          account,
          jobId: run.jobId,
          now: now(),
          leaseMs: context.leaseMs,
          limits: context.limits,
        });
        if (verdict.admitted) return verdict;
        // Held back: the delivery stays parked (pending, due) and goes when the gate's holder ends or the sweep finds
        // its turn come; the job itself is done.
        if (!(await completeJob(trx, run.jobId))) return 'lost' as const;
        return verdict;
      }
      // No attempt to make: the endpoint's place this job held goes to the account's next parked delivery.
      if (!(await completeJob(trx, run.jobId))) return 'lost' as const;
      if (due) await finishDelivery(trx, attempt, { status: 'failed', next_attempt_at: null, succeeded_at: null });
      await releaseLease(trx, delivery.endpoint_id, run.jobId);
      await dispatchAccount(trx, account, dispatch());
      return due ? ('skipped' as const) : ('superseded' as const);
    }),
  );
  if (admission === 'lost' || admission === 'superseded') return admission;
  if (admission === 'skipped') return count(admission);
  if (!admission.admitted) return admission.reason;

  const startedAt = now();
  const payload = JSON.stringify(
    envelopeOf({
      id: delivery.event_id,
      type: delivery.event_type,
      user_id: delivery.event_user_id,
      data: delivery.event_data,
      created_at: delivery.event_created_at,
    }),
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

  const outcome = await inLine(() =>
    db.transaction().execute(async (trx): Promise<AttemptResult> => {
      if (!(await completeJob(trx, run.jobId))) return 'lost';
      const finishedAt = now();
      // The gate first: its account lock comes before any row this transaction locks, as in admitAttempt.
      await settleAttempt(trx, {
        endpointId: delivery.endpoint_id,
        account,
        jobId: run.jobId,
        succeeded,
        now: finishedAt,
        limits: context.limits,
        scale: config.retryScale,
      });
      await insertAttempt(trx, {
        delivery_id: delivery.id,
        started_at: startedAt,
        duration_ms: response.durationMs,
        response_status: response.status,
        error: response.error,
      });
      await countAttempt(trx, delivery.id, startedAt);
      const delay = succeeded ? undefined : retryDelayMs(delivery.attempts + 1, config.retryScale);
      let result: DeliveryOutcome = succeeded ? 'succeeded' : delay === undefined ? 'failed' : 'retrying';
      // A retry is parked, due at `next`: the sweep gives it a job once it is due and its endpoint can take it.
      const next = delay === undefined ? null : new Date(finishedAt.getTime() + delay);
      await finishDelivery(trx, attempt, {
        status: result === 'retrying' ? 'pending' : result,
        next_attempt_at: next,
        succeeded_at: succeeded ? finishedAt : null,
      });
      if (succeeded) {
        await clearEndpointFailing(trx, delivery.endpoint_id);
      } else {
        const failingSince = await markEndpointFailing(trx, delivery.endpoint_id, startedAt);
        if (endpointFailingTooLong(failingSince, finishedAt, config.retryScale)) {
          await disableFailingEndpoint(trx, delivery.endpoint_id, finishedAt);
          result = 'failed';
        }
      }
      // The place this attempt held goes to the account's parked deliveries that have waited longest (this endpoint's
      // next one, unless its breaker just opened).
      await dispatchAccount(trx, account, { ...dispatch(), now: finishedAt });
      return result;
    }),
  );
  return count(outcome);
}

/** Completes the job in `trx` (pg-boss's own completion after the handler then finds it done); false if it was no longer active. */
async function completeJob(trx: Db, jobId: string): Promise<boolean> {
  // pg-boss 10 resolves with { affected } although its types say void.
  const result = (await jobEngine(trx).complete(WEBHOOK_DELIVERY_QUEUE, jobId)) as unknown as { affected: number };
  return result.affected === 1;
}

function count(result: AttemptResult): AttemptResult {
  if (result === 'succeeded' || result === 'retrying' || result === 'failed' || result === 'skipped')
    countDeliveryAttempt(result);
  return result;
}
