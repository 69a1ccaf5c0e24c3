// The relay of a delivering process: one pass fans new events out to deliveries (fan-out.ts), then gives jobs to the
// parked deliveries whose turn has come (queue.ts sweepParkedDeliveries). A pass runs when something may be waiting:
//   - at once when woken: the commit of an outbox row, or a re-send, NOTIFYs WEBHOOK_WORK_CHANNEL in every process
//     (db/notifications.ts), and a (re)established listening connection may have missed such messages;
//   - after a full pass (more may be waiting), straight away;
//   - otherwise every WEBHOOK_POLL_MS: retries fall due and breakers close by the clock alone, and a notification
//     can be lost (the listener reconnecting), so the poll is what guarantees progress; the wake-up is what makes it
//     fast.
// One pass at a time: a wake-up during a pass runs one more pass after it (the running pass may have read the
// outbox before that commit), however many wake-ups came meanwhile. And passes start at least `gapMs` apart: under a
// steady stream of writes every commit wakes every delivering process, and a pass costs its fixed statements
// whatever it finds, so the gap makes passes batch the commits of its span (a fixed cost per gap, not per write),
// while a commit after a quiet spell (the latency the bench measures) still starts a pass at once. Every pass is held
// by the process lifecycle, so a stop waits for it before the database closes.
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

export interface RelayOptions {
  pass: () => Promise<RelayPass>;
  pollMs: number;
  /** Least time between the starts of two passes. */
  gapMs: number;
  lifecycle: Lifecycle;
  logger: Logger;
  /** A pass sent jobs: wake workers to take them. */
  sent: (jobs: number) => void;
}

export function startRelay(options: RelayOptions): Relay {
  const { pass, pollMs, gapMs, lifecycle, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let lastStart = -Infinity;
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
    const wait = lastStart + gapMs - performance.now();
    if (wait > 0) return later(wait);
    again = false;
    lastStart = performance.now();
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
