// The attempts one process makes at once: up to `capacity` attempt jobs of the delivery queue, each run on its own
// (no batch waits for its slowest member). An attempt is a network wait, not CPU: a slot costs a socket and a few
// buffers, so a process holds hundreds (WEBHOOK_ATTEMPTS_PER_PROCESS) and slow receivers do not take the capacity
// of the others' first attempts.
//
// Jobs are taken with pg-boss's fetch, never more than the free slots: a job taken is started at once, so none waits
// in this process's memory while another process could run it, and its expiry (pg-boss gives a job whose process
// died to another) counts from its start. The queue's order is the fair one: dispatchAccount (queue.ts) gives each job
// a priority by its rank among its account's attempts in flight, and pg-boss fetches the highest priority first,
// so every account with work gets its first attempt before any account its second (round robin over the accounts).
//
// A fetch runs when something may be waiting and a slot is free: when woken (the relay sent jobs; the poll, for jobs
// another process sent or pg-boss gave back), and when an attempt ends. One fetch at a time; a wake-up during a fetch,
// or a full fetch, runs another after it.
import type { Logger } from 'pino';
import type PgBoss from 'pg-boss';
import { WEBHOOK_DELIVERY_QUEUE } from '../../db/job-queue.ts';
import type { AttemptJob } from './queue.ts';

export interface AttemptSlots {
  /** Takes waiting jobs into the free slots, now or right after the fetch under way. */
  wake(): void;
  /** Takes no more jobs; resolves once the attempts under way have ended. */
  stop(): Promise<void>;
}

export interface AttemptSlotsOptions {
  boss: PgBoss;
  capacity: number;
  /** Runs one attempt; a rejection fails the job, which pg-boss then retries. */
  run: (job: PgBoss.Job<AttemptJob>) => Promise<unknown>;
  logger: Logger;
  /** Whether the process is stopping: no job is taken then. */
  stopping: () => boolean;
}

export function startAttemptSlots(options: AttemptSlotsOptions): AttemptSlots {
  const { boss, capacity, logger } = options;
  const running = new Set<Promise<void>>();
  let fetching: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const stopping = () => stopped || options.stopping();

  async function fill(): Promise<void> {
    do {
      again = false;
      const room = capacity - running.size;
      if (room <= 0 || stopping()) return;
      // pg-boss's fetch reports a failed query as no job: the next wake-up (the poll at the latest) tries again.
      const jobs = await boss.fetch<AttemptJob>(WEBHOOK_DELIVERY_QUEUE, { batchSize: room });
      for (const job of jobs) start(job);
      if (jobs.length === room) again = true;
    } while (again);
  }

  function wake(): void {
    if (fetching) return void (again = true);
    fetching = fill()
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook attempt jobs could not be fetched; trying again'))
      .finally(() => {
        fetching = undefined;
        // Woken after the fetch's last look: look again.
        if (again) wake();
      });
  }

  function start(job: PgBoss.Job<AttemptJob>): void {
    const attempt = options
      .run(job)
      // The attempt completes its job in the transaction that records it; this completes a job that ended without
      // one (its delivery was deleted), and finds the others done.
      .then(
        () => boss.complete(WEBHOOK_DELIVERY_QUEUE, job.id),
        (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          return boss.fail(WEBHOOK_DELIVERY_QUEUE, job.id, { message });
        },
      )
      .then(
        () => {},
        (error: unknown) =>
          logger.warn({ err: error }, 'a webhook attempt job could not be closed; it goes back when it expires'),
      )
      .finally(() => {
        running.delete(attempt);
        // Its slot is free, and more jobs are likely waiting.
        wake();
      });
    running.add(attempt);
  }

  return {
    wake,
    async stop() {
      stopped = true;
      await fetching;
      await Promise.all(running);
    },
  };
}
