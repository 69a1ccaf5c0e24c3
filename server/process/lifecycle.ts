// The stop of a serving process, on SIGTERM or SIGINT:
//   1. at once: readiness fails (/readyz 503) so load balancers take the process out, and every response closes
//      its connection, so keep-alive clients move to new connections instead of being reset;
//   2. after the drain period: the listener closes, open streams send their last event (retry) and store what they
//      streamed, requests in flight finish. On SIGINT (Ctrl-C at a terminal) the drain also ends as soon as no
//      connection is open: no client is left to tell. SIGTERM, an orchestrator's stop, drains the whole period, since
//      a balancer may still send new connections until it sees /readyz fail, idle or not;
//   3. once every connection has ended and every handler has returned: the database and Redis close, exit 0.
// A hard deadline from the signal exits the process (code 1) whatever still hangs.
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { drainConnections } from './shutdown.ts';

/** What request handling needs to know about the process's stop. */
export interface Lifecycle {
  /** True from the stop signal on: the process should no longer be sent traffic. */
  readonly draining: boolean;
  /** Aborted when the drain ends: an open stream sends its last event, asking the client to retry, and ends. */
  readonly streamsEnd: AbortSignal;
  /** Makes the stop wait for `work` (a handler, a stream storing its reply) before the database closes. */
  hold<T>(work: Promise<T>): Promise<T>;
}

/** The lifecycle as the stop drives it. */
export interface LifecycleControl extends Lifecycle {
  beginDrain(): void;
  endStreams(): void;
  /** Resolves once no held work is left (work held meanwhile included). */
  idle(): Promise<void>;
  readonly running: number;
}

export function createLifecycle(): LifecycleControl {
  let draining = false;
  const streams = new AbortController();
  const held = new Set<Promise<void>>();
  return {
    get draining() {
      return draining;
    },
    streamsEnd: streams.signal,
    hold(work) {
      const settled = work.then(
        () => {},
        () => {},
      );
      held.add(settled);
      void settled.then(() => held.delete(settled));
      return work;
    },
    beginDrain: () => (draining = true),
    endStreams: () => streams.abort(),
    async idle() {
      while (held.size > 0) await Promise.all(held);
    },
    get running() {
      return held.size;
    },
  };
}

export interface StopOptions {
  /** How long requests keep being served (each closing its connection) before the listener closes. */
  drainMs: number;
  /** From the signal: past it, the process exits whatever hangs. */
  deadlineMs: number;
  logger: Logger;
  /** Closes what the handlers used (the database pool, Redis); runs after the last handler has returned. */
  release: () => Promise<unknown>;
  /** Ends the process; tests replace it. */
  exit?: (code: number) => void;
}

/**
 * Tracks `server`'s connections from now on (call it right after `listen()`) and returns the stop described
 * above; it runs once, however often it is called, and resolves with the exit code it exited with.
 */
export function gracefulStop(
  server: Server,
  lifecycle: LifecycleControl,
  options: StopOptions,
): (reason: string, choice?: DrainChoice) => Promise<number> {
  const connections = drainConnections(server);
  const { logger, drainMs, deadlineMs, exit = (code) => process.exit(code) } = options;
  let stopping: Promise<number> | undefined;

  const stop = async (reason: string, { endWhenIdle }: DrainChoice): Promise<number> => {
    lifecycle.beginDrain();
    connections.closeAfterEachResponse();
    logger.info({ reason, drainMs, deadlineMs }, 'stopping: not ready, draining connections');
    let deadline: NodeJS.Timeout | undefined;
    const deadlineReached = new Promise<number>((resolve) => {
      deadline = setTimeout(() => {
        logger.error(
          { openConnections: connections.open, handlersRunning: lifecycle.running },
          'stop deadline reached: exiting with work unfinished',
        );
        connections.destroyAll();
        resolve(1);
      }, deadlineMs);
    });
    const clean = (async () => {
      await drained(drainMs, endWhenIdle ? connections.noneOpen() : undefined);
      const { allEnded } = await connections.closeListener();
      logger.info(
        { openConnections: connections.open, handlersRunning: lifecycle.running },
        'stopping: listener closed, ending streams and requests in flight',
      );
      lifecycle.endStreams();
      await Promise.all([allEnded, lifecycle.idle()]);
      await options.release();
      return 0;
    })().catch((error: unknown) => {
      logger.error({ err: error }, 'stopping failed');
      return 1;
    });
    const code = await Promise.race([clean, deadlineReached]);
    clearTimeout(deadline);
    if (code === 0) logger.info('stopped');
    exit(code);
    return code;
  };
  return (reason, choice = { endWhenIdle: false }) => (stopping ??= stop(reason, choice));
}

export interface DrainChoice {
  /** End the drain as soon as no connection is open, not only at its end. */
  endWhenIdle: boolean;
}

/** The one call app/main.ts makes once it listens: a graceful stop on SIGTERM and SIGINT. */
export function stopOnSignals(server: Server, lifecycle: LifecycleControl, options: StopOptions): void {
  const stop = gracefulStop(server, lifecycle, options);
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT', { endWhenIdle: true }));
}

/** Resolves after `ms`, or sooner once `noneOpen` (when given) does; the timer does not outlive it. */
async function drained(ms: number, noneOpen: Promise<void> | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ...(noneOpen ? [noneOpen] : []),
  ]);
  clearTimeout(timer);
}
