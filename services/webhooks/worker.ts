// The delivery worker of a process in the worker role (the default role runs it beside the web server). Two parts:
//   - the relay (relay.ts): it fans new events out to deliveries (fan-out.ts), parked, then sweeps the parked
//     deliveries (queue.ts): those whose endpoint can take an attempt now get a job (new ones, retries now due,
//     endpoints whose breaker closed), a few per account at most. It runs when an outbox row (or a re-send) is
//     announced on WEBHOOK_WORK_CHANNEL after its commit, by whichever process committed it, and every WEBHOOK_POLL_MS;
//   - the attempt slots (attempt-slots.ts): up to `attemptsPerProcess` attempts at once (WEBHOOK_ATTEMPTS_PER_PROCESS:
//     attempts are network waits, so hundreds), each job taken from the delivery queue with pg-boss's fetch when a
//     slot is free, highest priority first (each account's first attempt before any account's second: queue.ts),
//     and run on its own, so a slow receiver holds one slot, never a batch. The slots take jobs when the relay sent
//     some, when an attempt ends, and every WEBHOOK_POLL_MS (the jobs nobody announced: another process's, a dead
//     process's given back). pg-boss hands each job to one process (SKIP LOCKED). This process also runs pg-boss's
//     maintenance, which gives a job whose process died (kill -9, power loss) to another once it expires.
// So the first attempt of an event starts a few statements after its commit, not a poll later; the polls remain for
// what only the clock brings (retries, breakers, expired leases) and for a notification lost while reconnecting.
// Before its first fetch, it sweeps once, so a delivery parked while no worker ran gets its job.
// It also keeps the outbox to its retention: at its start and every hour, the events past it (and their deliveries)
// are deleted (services/events/feed.ts), so the changes feed holds what it documents and the table stays bounded.
// Each attempt is held by the process lifecycle, so a stop (SIGTERM) stops fetching, lets the attempts in flight
// finish and record, then closes the database. A failing database is logged and retried; it never ends the process.
import type { Logger } from 'pino';
import { POOL_CONNECTIONS, type Db } from '../../db/connect.ts';
import type { Notifications } from '../../db/notifications.ts';
import { jobEngine, WEBHOOK_DELIVERY_QUEUE, WEBHOOK_DELIVERY_QUEUE_OPTIONS } from '../../db/job-queue.ts';
import type { WebhookConfig } from './delivery-config.ts';
import type { Lifecycle } from '../../server/process/lifecycle.ts';
import type { SecretBox } from '../../server/auth/secret-box.ts';
import { purgeExpiredEvents } from '../events/feed.ts';
import { keyedLine } from '../leases/keyed-line.ts';
import { attemptDelivery } from './attempt.ts';
import { startAttemptSlots } from './attempt-slots.ts';
import { poolShare } from './pool-share.ts';
import { DELIVERY_LIMITS, type DeliveryLimits } from './gate.ts';
import { relayPass } from './fan-out.ts';
import { sweepParkedDeliveries, WEBHOOK_WORK_CHANNEL } from './queue.ts';
import { startRelay } from './relay.ts';

/** Beyond the attempt's own timeout, time to load and record it before its job expires and goes to another worker. */
const EXPIRY_MARGIN_MS = 5_000;
/**
 * Least time between two relay passes (relay.ts): a commit after a quiet spell is relayed at once, a steady stream
 * of commits in passes of this span each. Small beside the first attempt's target (100 ms from the commit at p50).
 */
const RELAY_GAP_MS = 25;
/** How often the outbox loses its events past their retention: their age is counted in days, an hour is close enough. */
const PURGE_EVERY_MS = 3_600_000;
/**
 * Pooled connections the attempts' transactions take at once, half the pool's: the others stay for the API's requests
 * and the relay, whatever wave of attempts starts or ends (pool-share.ts).
 */
const ATTEMPT_CONNECTIONS = Math.floor(POOL_CONNECTIONS / 2);
/** A job that failed for want of the database (not an attempt that failed: that one is recorded) is tried again. */
const JOB_RETRIES = { retryLimit: 20, retryDelay: 5, retryBackoff: true } as const;

export interface DeliveryWorker {
  /** Stops fetching; resolves once the attempts in flight have finished. */
  stop(): Promise<void>;
}

export interface DeliveryWorkerOptions {
  db: Db;
  box: SecretBox;
  config: WebhookConfig;
  logger: Logger;
  lifecycle: Lifecycle;
  limits?: Partial<DeliveryLimits>;
  /** The commits that announce work wake the relay; without them it runs every WEBHOOK_POLL_MS only. */
  notifications?: Notifications;
}

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { db, config, logger, lifecycle } = options;
  const limits: DeliveryLimits = { ...DELIVERY_LIMITS, ...options.limits };
  const expireInSeconds = Math.ceil((2 * config.attemptTimeoutMs + EXPIRY_MARGIN_MS) / 1000);
  // An endpoint's lease outlasts its attempt and the recording of it, and ends before the job expires, so the job
  // pg-boss gives back after a process died finds the endpoint free (or its own lease: it keeps its id).
  const leaseMs = config.attemptTimeoutMs + EXPIRY_MARGIN_MS;
  // Maintenance (expiring the jobs of dead processes) runs as often as a job can expire, in one process at a time.
  const boss = jobEngine(db, { supervise: true, maintenanceIntervalSeconds: expireInSeconds });
  boss.on('error', (error) =>
    logger.warn({ err: error }, 'webhook delivery could not reach the database; trying again'),
  );
  const sweepOptions = { limits, leaseMs };
  let stopped = false;
  // Jobs are taken once pg-boss has started and the queue is set up.
  let ready = false;
  const stopping = () => stopped || lifecycle.draining;
  const accountLine = keyedLine(config.attemptsPerProcess);
  const context = { db, box: options.box, config, limits, leaseMs, accountLine, share: poolShare(ATTEMPT_CONNECTIONS) };
  const slots = startAttemptSlots({
    boss,
    capacity: config.attemptsPerProcess,
    logger,
    stopping: () => stopping() || !ready,
    run: async (job) => {
      const run = { jobId: job.id, deliveryId: job.data.delivery_id, due: new Date(job.data.due) };
      try {
        await lifecycle.hold(attemptDelivery(context, run));
      } catch (error) {
        logger.warn({ err: error }, 'a webhook attempt could not be recorded; its job is tried again');
        throw error;
      }
    },
  });

  const started = (async () => {
    await boss.start();
    // The queue's expiry follows this process's attempt timeout (the processes of one deployment share it).
    await boss.updateQueue(WEBHOOK_DELIVERY_QUEUE, {
      ...WEBHOOK_DELIVERY_QUEUE_OPTIONS,
      ...JOB_RETRIES,
      expireInSeconds,
    });
    const swept = await sweepParkedDeliveries(db, sweepOptions);
    if (swept.sent > 0) logger.info({ jobs: swept.sent }, 'parked webhook deliveries were given jobs');
    ready = true;
    slots.wake();
  })();
  started.catch((error: unknown) => logger.error({ err: error }, 'webhook delivery could not start'));

  const relay = startRelay({
    pollMs: config.pollMs,
    gapMs: RELAY_GAP_MS,
    lifecycle,
    logger,
    pass: () => relayPass(db, sweepOptions),
    // Jobs were sent: the slots take them now rather than at the next poll.
    sent: slots.wake,
  });
  const unsubscribe = options.notifications?.subscribe(WEBHOOK_WORK_CHANNEL, {
    message: relay.wake,
    missed: relay.wake,
  });
  // The queue's poll, for the jobs nobody announced to this process.
  const polling = setInterval(slots.wake, config.pollMs).unref();

  const purge = () => {
    if (stopping()) return;
    lifecycle
      .hold(purgeExpiredEvents(db, new Date()))
      .then((deleted) => deleted > 0 && logger.info({ events: deleted }, 'events past their retention were deleted'))
      .catch((error: unknown) =>
        logger.warn({ err: error }, 'events past their retention could not be deleted; trying again within the hour'),
      );
  };
  purge();
  const purging = setInterval(purge, PURGE_EVERY_MS).unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(purging);
      clearInterval(polling);
      unsubscribe?.();
      await relay.stop();
      await started.catch(() => {});
      await slots.stop();
      // Its maintenance; the database is ours to close, not pg-boss's.
      await boss.stop({
        close: false,
        graceful: true,
        wait: true,
        timeout: 2 * config.attemptTimeoutMs + EXPIRY_MARGIN_MS,
      });
    },
  };
}
