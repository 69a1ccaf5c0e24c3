// The delivery worker of a process in the worker role (the default role runs it beside the web server). Two loops:
//   - the outbox relay: every WEBHOOK_POLL_MS it fans new events out to deliveries (fan-out.ts), whose first
//     attempts become jobs in the same transaction;
//   - pg-boss's worker on the delivery queue, polling every WEBHOOK_POLL_MS (at least 500, pg-boss's floor):
//     a batch of due attempt jobs, made at once (attempt.ts). pg-boss hands each job to one worker (SKIP LOCKED) and
//     one job of a delivery at a time (singleton key). This process also runs pg-boss's maintenance, which gives a
//     job whose process died (kill -9, power loss) to another worker once it expires.
// Before its first fetch, it gives a job to any pending delivery left without one (queue.ts).
// Each attempt is held by the process lifecycle, so a stop (SIGTERM) stops fetching, lets the attempts in flight
// finish and record, then closes the database. A failing database is logged and retried; it never ends the process.
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { jobEngine, WEBHOOK_DELIVERY_QUEUE, WEBHOOK_DELIVERY_QUEUE_OPTIONS } from '../../db/job-queue.ts';
import type { WebhookConfig } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { SecretBox } from '../secret-box.ts';
import { attemptDelivery } from './attempt.ts';
import { fanOutEvents } from './fan-out.ts';
import { adoptDeliveriesWithoutJob, type AttemptJob } from './queue.ts';

/** Attempt jobs fetched per poll, made concurrently. */
const BATCH = 10;
/** Beyond the attempt's own timeout, time to load and record it before its job expires and goes to another worker. */
const EXPIRY_MARGIN_MS = 5_000;
/** A job that failed for want of the database (not an attempt that failed: that one is recorded) is tried again. */
const JOB_RETRIES = { retryLimit: 20, retryDelay: 5, retryBackoff: true } as const;

export interface DeliveryWorker {
  /** Stops fetching; resolves once the attempts in flight have finished. */
  stop(): Promise<void>;
}

export function startDeliveryWorker(options: { db: Db; box: SecretBox; config: WebhookConfig; logger: Logger; lifecycle: Lifecycle }): DeliveryWorker {
  const { db, config, logger, lifecycle } = options;
  const expireInSeconds = Math.ceil((2 * config.attemptTimeoutMs + EXPIRY_MARGIN_MS) / 1000);
  // Maintenance (expiring the jobs of dead processes) runs as often as a job can expire, in one process at a time.
  const boss = jobEngine(db, { supervise: true, maintenanceIntervalSeconds: expireInSeconds });
  boss.on('error', (error) => logger.warn({ err: error }, 'webhook delivery could not reach the database; trying again'));
  let stopped = false;
  const stopping = () => stopped || lifecycle.draining;

  const started = (async () => {
    await boss.start();
    // The queue's expiry follows this process's attempt timeout (the processes of one deployment share it).
    await boss.updateQueue(WEBHOOK_DELIVERY_QUEUE, { ...WEBHOOK_DELIVERY_QUEUE_OPTIONS, ...JOB_RETRIES, expireInSeconds });
    const adopted = await adoptDeliveriesWithoutJob(db);
    if (adopted > 0) logger.info({ deliveries: adopted }, 'pending webhook deliveries without a job were given one');
    await boss.work<AttemptJob>(WEBHOOK_DELIVERY_QUEUE, { batchSize: BATCH, pollingIntervalSeconds: config.pollMs / 1000 }, async (jobs) => {
      const results = await Promise.allSettled(
        jobs.map((job) => lifecycle.hold(attemptDelivery({ db, box: options.box, config }, { jobId: job.id, deliveryId: job.data.delivery_id, due: new Date(job.data.due) }))),
      );
      const failed = results.find((result) => result.status === 'rejected');
      if (!failed) return;
      logger.warn({ err: failed.reason }, 'a webhook attempt could not be recorded; its job is tried again');
      // pg-boss then fails the jobs of this batch not yet completed, and retries them.
      throw failed.reason;
    });
  })();
  started.catch((error: unknown) => logger.error({ err: error }, 'webhook delivery could not start'));

  let relayTimer: NodeJS.Timeout | undefined;
  let relay: Promise<void> = Promise.resolve();
  const scheduleRelay = (delayMs: number) => {
    if (stopping()) return;
    relayTimer = setTimeout(() => {
      // Held, so a stop waits for the pass before the database closes.
      relay = lifecycle.hold(
        fanOutEvents(db).then(
          (handled) => scheduleRelay(handled > 0 ? 0 : config.pollMs),
          (error: unknown) => {
            logger.warn({ err: error }, 'webhook fan-out could not reach the database; trying again');
            scheduleRelay(config.pollMs);
          },
        ),
      );
    }, delayMs);
  };
  scheduleRelay(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(relayTimer);
      await relay;
      await started.catch(() => {});
      // Stops fetching and waits for the batch in flight; the database is ours to close, not pg-boss's.
      await boss.stop({ close: false, graceful: true, wait: true, timeout: 2 * config.attemptTimeoutMs + EXPIRY_MARGIN_MS });
    },
  };
}
