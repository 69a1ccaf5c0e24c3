// The relay passes of a delivery worker under test, seen through the lifecycle that holds each of them (relay.ts holds
// every pass; the attempts and the outbox's purge are held too, and told apart by what they resolve to). A pass that
// began after a commit had ended reads the outbox after it, so "a pass that began after X has ended" is an event a
// test can wait on instead of a clock: what the worker was going to do about X, it has done (its attempts aside).
import { createLifecycle, type LifecycleControl } from '../../../server/process/lifecycle.ts';
import type { RelayPass } from '../../../services/webhooks/relay.ts';

export interface Pass {
  /** performance.now() when the pass was handed to the lifecycle (its first statement already sent). */
  startedAt: number;
  /** performance.now() when it ended. */
  endedAt: number;
  sent: number;
}

export interface RelayPasses {
  /** The lifecycle to give the worker. */
  lifecycle: LifecycleControl;
  /** The passes ended so far, in the order they ended. */
  readonly ended: readonly Pass[];
  /** Resolves with the first pass that began at or after `since` (performance.now()) once it has ended. */
  passAfter(since?: number): Promise<Pass>;
}

const isRelayPass = (value: unknown): value is RelayPass =>
  typeof value === 'object' && value !== null && 'more' in value && 'sent' in value;

export function observedRelayPasses(): RelayPasses {
  const lifecycle = createLifecycle();
  const ended: Pass[] = [];
  const waiters = new Set<() => void>();
  const hold = lifecycle.hold.bind(lifecycle);
  lifecycle.hold = <T>(work: Promise<T>) => {
    const startedAt = performance.now();
    return hold(
      work.then((result) => {
        if (isRelayPass(result)) {
          ended.push({ startedAt, endedAt: performance.now(), sent: result.sent });
          for (const wake of waiters) wake();
        }
        return result;
      }),
    );
  };
  return {
    lifecycle,
    ended,
    passAfter(since = performance.now()) {
      return new Promise((resolve) => {
        const check = () => {
          const pass = ended.find((p) => p.startedAt >= since);
          if (!pass) return;
          waiters.delete(check);
          resolve(pass);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
