// One attempt of a claimed delivery (worker.ts claims it under a lease): load it with its event and endpoint, send
// it unless the endpoint was disabled or the app's grant no longer covers the event, and record the outcome in one
// transaction — the attempt row, the delivery's new state, the endpoint's run of failures. The record is made only
// while the claim still holds, so an attempt is recorded once even if a stalled process wakes up late.
import type { Db } from '../../db/connect.ts';
import {
  appMayReceive,
  clearEndpointFailing,
  disableFailingEndpoint,
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
import { endpointFailingTooLong, retryDelayMs } from './retry-schedule.ts';
import { signingSecrets } from './secrets.ts';
import { sendWebhook } from './send.ts';

export interface AttemptContext {
  db: Db;
  box: SecretBox;
  config: WebhookConfig;
  now?: () => Date;
}

export interface Claim {
  id: string;
  lease: Date;
}

/** Makes the claimed attempt; returns what became of it ('lost' when the claim no longer held). */
export async function attemptDelivery(context: AttemptContext, claim: Claim): Promise<DeliveryOutcome | 'lost'> {
  const { db, config } = context;
  const now = context.now ?? (() => new Date());
  const delivery = await findDeliveryForAttempt(db, claim.id);
  if (!delivery || delivery.status !== 'pending' || delivery.next_attempt_at?.getTime() !== claim.lease.getTime()) return 'lost';

  const covered =
    delivery.enabled &&
    (delivery.endpoint_client_id === null || (await appMayReceive(db, delivery.endpoint_client_id, delivery.event_user_id, readScopeOf(delivery.event_type as EventType))));
  if (!covered) {
    const recorded = await finishDelivery(db, claim, { status: 'failed', next_attempt_at: null, attempted_at: null, succeeded_at: null });
    return count(recorded ? 'skipped' : 'lost');
  }

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

  const outcome = await db.transaction().execute(async (trx): Promise<DeliveryOutcome | 'lost'> => {
    const finishedAt = now();
    const delay = succeeded ? undefined : retryDelayMs(delivery.attempts + 1, config.retryScale);
    const result: DeliveryOutcome = succeeded ? 'succeeded' : delay === undefined ? 'failed' : 'retrying';
    const recorded = await finishDelivery(trx, claim, {
      status: result === 'retrying' ? 'pending' : result,
      next_attempt_at: delay === undefined ? null : new Date(finishedAt.getTime() + delay),
      attempted_at: startedAt,
      succeeded_at: succeeded ? finishedAt : null,
    });
    if (!recorded) return 'lost';
    await insertAttempt(trx, { delivery_id: delivery.id, started_at: startedAt, duration_ms: response.durationMs, response_status: response.status, error: response.error });
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

function count(outcome: DeliveryOutcome | 'lost'): DeliveryOutcome | 'lost' {
  if (outcome !== 'lost') countDeliveryAttempt(outcome);
  return outcome;
}
