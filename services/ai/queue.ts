// Generation slots of the AI tutor, per process: at most `maxConcurrency` replies are generated at once; further
// requests wait in a bounded queue, where contract accounts' requests go ahead of all others and each class is
// served first come, first served. A full queue refuses at once (the handler answers 503 before its stream starts).
//
// Before a request may wait or start, its account takes one of its own places (reply-places.ts), counted across
// processes: so one account can hold at most its few places of the queue, however many requests it sends, and the
// queue stays first come first served between accounts rather than between requests.
//
// The slots are per process on purpose: N processes generate at most N × maxConcurrency replies. A shared queue
// would put a network hop and a failure mode on every move of the queue for a limit whose point is to protect this
// process and its provider connection. The accounts' places are shared, because their point is fairness between
// accounts wherever their requests land.
//
// A small module rather than p-queue 8: p-queue has priorities and abortable waits, but does not say where a
// waiting task stands or when it moves, which the `queued` events of the stream need.

export interface AiQueueLimits {
  /** Replies generated at once. */
  maxConcurrency: number;
  /** Requests that may wait for a slot; one more is refused. 0: refuse whenever every slot is busy. */
  maxQueue: number;
}

/** A held generation slot; `release()` frees it for the next request (a second call does nothing). */
export interface Slot {
  release(): void;
}

/** A request waiting for a slot. */
export interface Waiting {
  /** Its place in the queue now, 1 being the next to start. */
  readonly position: number;
  /** Called whenever the position changes: up as requests ahead start or leave, down behind a contract account's. */
  onMove(listener: (position: number) => void): void;
  /** Resolves with the slot on this request's turn; rejects with the signal's reason when it aborts first. */
  readonly granted: Promise<Slot>;
}

export type Admission = { kind: 'started'; slot: Slot } | { kind: 'queued'; waiting: Waiting } | { kind: 'full' };

export interface AiQueue {
  /**
   * A slot now, a place in the queue, or `full`. `first`: the request goes ahead of every waiting request without
   * it (contract accounts). An abort of `signal` while waiting takes the request out of the queue.
   */
  admit(first: boolean, signal: AbortSignal): Admission;
  readonly running: number;
  readonly waiting: number;
}

/** Without AI_MAX_CONCURRENCY / AI_MAX_QUEUE. */
export const DEFAULT_AI_QUEUE_LIMITS: AiQueueLimits = { maxConcurrency: 4, maxQueue: 16 };

interface Waiter {
  first: boolean;
  position: number;
  listener: ((position: number) => void) | undefined;
  grant: (slot: Slot) => void;
}

export function createAiQueue(limits: AiQueueLimits = DEFAULT_AI_QUEUE_LIMITS): AiQueue {
  /** In the order they will start. */
  const waiters: Waiter[] = [];
  let running = 0;

  const newSlot = (): Slot => {
    running++;
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        running--;
        startWaiters();
      },
    };
  };

  const startWaiters = () => {
    while (running < limits.maxConcurrency && waiters.length > 0) waiters.shift()!.grant(newSlot());
    renumber();
  };

  const renumber = () => {
    waiters.forEach((waiter, i) => {
      if (waiter.position === i + 1) return;
      waiter.position = i + 1;
      waiter.listener?.(i + 1);
    });
  };

  return {
    admit(first, signal) {
      if (running < limits.maxConcurrency && waiters.length === 0) return { kind: 'started', slot: newSlot() };
      if (waiters.length >= limits.maxQueue) return { kind: 'full' };

      let rejectGrant!: (reason: unknown) => void;
      const waiter: Waiter = { first, position: 0, listener: undefined, grant: () => {} };
      const leave = () => {
        const index = waiters.indexOf(waiter);
        if (index < 0) return;
        waiters.splice(index, 1);
        renumber();
        rejectGrant(signal.reason);
      };
      const granted = new Promise<Slot>((resolve, reject) => {
        rejectGrant = reject;
        waiter.grant = (slot) => {
          signal.removeEventListener('abort', leave);
          resolve(slot);
        };
      });
      // Marked as handled: the handler may still be opening its stream when the client leaves; it awaits this later.
      granted.catch(() => {});
      // Contract accounts' requests go behind the other contract accounts' but ahead of everyone else's.
      const index = first ? waiters.findIndex((w) => !w.first) : -1;
      waiters.splice(index < 0 ? waiters.length : index, 0, waiter);
      renumber();
      if (signal.aborted) leave();
      else signal.addEventListener('abort', leave, { once: true });
      return {
        kind: 'queued',
        waiting: {
          get position() {
            return waiter.position;
          },
          onMove: (listener) => (waiter.listener = listener),
          granted,
        },
      };
    },
    get running() {
      return running;
    },
    get waiting() {
      return waiters.length;
    },
  };
}
