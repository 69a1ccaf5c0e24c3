// The relay of a delivering process: one pass fans new events out to deliveries (fan-out.ts), then gives jobs to the
// parked deliveries whose turn has come (queue.ts sweepParkedDeliveries). A pass runs when something may be waiting:
//   - at once when woken: the commit of an outbox row, or a re-send, NOTIFYs WEBHOOK_WORK_CHANNEL in every process
//     (db/notifications.ts), and a (re)established listening connection may have missed such messages;
//   - after a full pass (more may be waiting), straight away;
//   - otherwise every WEBHOOK_POLL_MS: retries fall due and breakers close by the clock alone, and a notification
//     can be lost (the listener reconnecting), so the poll is what guarantees progress; the wake-up is what makes it
//     fast.
// One pass at a time: a wake-up during a pass runs one more pass after it (the running pass may have read the
// outbox before that commit), however many wake-ups came meanwhile, so a burst of commits costs a few passes, not one
// each. Every pass is held by the process lifecycle, so a stop waits for it before the database closes.
import type { Logger } from 'pino';
import type { Lifecycle } from '../../server/process/lifecycle.ts';

export interface RelayPass {
  /** More may be waiting (a full batch or page): run again at once. */
  more: boolean;
  /** Jobs the pass sent. */
  sent: number;
}

export interface Relay {
  /** Runs a pass now, or right after the one running. */
  wake(): void;
  /** No pass starts from now on; resolves once the running one (if any) has ended. */
  stop(): Promise<void>;
}

export function startRelay(options: { pass: () => Promise<RelayPass>; pollMs: number; lifecycle: Lifecycle; logger: Logger; sent: (jobs: number) => void }): Relay {
  const { pass, pollMs, lifecycle, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const stopping = () => stopped || lifecycle.draining;

  const later = (delayMs: number) => {
    clearTimeout(timer);
    if (!stopping()) timer = setTimeout(run, delayMs);
  };
  function run(): void {
    clearTimeout(timer);
    if (stopping()) return;
    if (running) return void (again = true);
    again = false;
    running = lifecycle
      .hold(pass())
      .then(
        ({ more, sent }) => {
          if (sent > 0 && !stopping()) options.sent(sent);
          return more || again;
        },
        (error: unknown) => {
          logger.warn({ err: error }, 'webhook fan-out could not reach the database; trying again');
          return false;
        },
      )
      .then((soon) => {
        running = undefined;
        later(soon ? 0 : pollMs);
      });
  }

  later(0);
  return {
    wake: run,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
