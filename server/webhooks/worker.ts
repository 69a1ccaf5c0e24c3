// The delivery worker of a process in the worker role (the default role runs it beside the web server): every
// WEBHOOK_POLL_MS it fans new events out to deliveries and claims due deliveries, a batch at a time, each under a
// lease (SKIP LOCKED: two processes never claim the same attempt). Each attempt is held by the process lifecycle,
// so a stop (SIGTERM) stops claiming, lets the attempts in flight finish and record, then closes the database. An
// attempt cut short by a hard stop or a kill is not lost: its lease ends and any worker makes it again, with the
// same webhook-id. A failing database is logged and retried on the next tick; it never ends the process.
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { claimDueDeliveries } from '../../db/queries/deliveries.ts';
import type { WebhookConfig } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { SecretBox } from '../secret-box.ts';
import { attemptDelivery } from './attempt.ts';
import { fanOutEvents } from './fan-out.ts';

/** Deliveries claimed per tick; a full batch makes the next tick start at once. */
const CLAIM_BATCH = 10;
/** Beyond the attempt's own timeout, time to load and record it before another worker may take it over. */
const LEASE_MARGIN_MS = 5_000;

export interface DeliveryWorker {
  /** Stops claiming; resolves once the attempts in flight have finished. */
  stop(): Promise<void>;
}

export function startDeliveryWorker(options: { db: Db; box: SecretBox; config: WebhookConfig; logger: Logger; lifecycle: Lifecycle }): DeliveryWorker {
  const { db, config, logger, lifecycle } = options;
  const leaseMs = 2 * config.attemptTimeoutMs + LEASE_MARGIN_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let tick: Promise<void> = Promise.resolve();

  const runTick = async (): Promise<boolean> => {
    while ((await fanOutEvents(db)) > 0 && !stopping()) {
      // Events keep arriving in batches: drain them before claiming.
    }
    if (stopping()) return false;
    const now = new Date();
    const claims = await claimDueDeliveries(db, now, new Date(now.getTime() + leaseMs), CLAIM_BATCH);
    await Promise.all(
      claims.map((claim) =>
        lifecycle.hold(
          attemptDelivery({ db, box: options.box, config }, claim).catch((error: unknown) => {
            logger.warn({ err: error, delivery: claim.id }, 'a webhook attempt could not be recorded; it is tried again when its lease ends');
          }),
        ),
      ),
    );
    return claims.length === CLAIM_BATCH;
  };
  const stopping = () => stopped || lifecycle.draining;

  const schedule = (delayMs: number) => {
    if (stopping()) return;
    timer = setTimeout(() => {
      // Held, so a stop waits for the tick (its claim included) before the database closes.
      tick = lifecycle.hold(
        runTick().then(
          (more) => schedule(more ? 0 : config.pollMs),
          (error: unknown) => {
            logger.warn({ err: error }, 'webhook delivery could not reach the database; trying again');
            schedule(config.pollMs);
          },
        ),
      );
    }, delayMs);
  };
  schedule(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await tick;
    },
  };
}
