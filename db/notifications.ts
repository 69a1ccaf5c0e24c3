// The notification path between processes: a small message on a named channel, published by the transaction of the
// change it announces and delivered to every process's subscribers once that transaction commits (PostgreSQL NOTIFY;
// never before the commit, never for a rolled-back change). Streams use it to push at once; caches use it to drop what
// another process changed. A message is a hint, not a record: what it points at is read from the database, so a
// subscriber told that it may have missed messages reads its state again and loses nothing.
//
// The service's own writes on PostgreSQL hand their messages to the process, which sends them right after the commit
// instead of in it: PostgreSQL serializes the commits of notifying transactions server-wide
// (db/notifications-after-commit.ts). A process that dies between a commit and its send loses that message unannounced;
// what depends on one has a second way (the webhook relay's poll, a bound on how long a cache is kept, a stream's
// periodic read).
//
// On PostgreSQL each process holds one dedicated connection that LISTENs (outside the pool: a pooled connection
// would be handed to queries and lose its LISTENs); it reconnects with backoff when lost and then tells every
// subscriber that it may have missed messages. Redis pub/sub is not used even when REDIS_URL is set: NOTIFY needs no
// second system. On the embedded database (one process) PGlite's own LISTEN delivers the same NOTIFY in process.
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { embeddedDatabaseOf, type Db } from './connect.ts';

export interface Subscriber {
  /** A message published on the channel. */
  message(payload: string): void;
  /** Messages may have been lost (the listening connection was (re)established): read the state again. */
  missed(): void;
  /** Messages stop arriving until the next `missed` (the listening connection is lost): trust nothing kept till then. */
  lost?(): void;
}

export interface Notifications {
  /** Starts delivering the channel's messages to `subscriber`; returns the call that stops it. */
  subscribe(channel: string, subscriber: Subscriber): () => void;
  /** Stops listening for good (the process stops). */
  close(): Promise<void>;
}

export interface ListenOptions {
  logger: Logger;
  /** Bound on opening the listening connection and on each LISTEN. */
  timeoutMs: number;
  /** Longest wait between two attempts to reconnect (the first waits a tenth of it). */
  maxBackoffMs?: number;
}

/** Channel names are SQL identifiers: lower-case letters, digits and underscores keep them the same everywhere. */
const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;
/** The listening connection's name in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'study-companion-listener';

/**
 * Sends `payload` on `channel` when `trx` commits (nothing if it rolls back), by the commit itself: for changes every
 * process must see from its next request on (a revoked grant), whatever happens to the writing process.
 */
export async function notifyOnCommit(trx: Db, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(trx);
}

/**
 * Sends `payload` on `channel` once `trx` has committed (nothing if it rolls back): on the service's own connections
 * by the process right after the commit, elsewhere by the commit (db/notifications-after-commit.ts). For messages
 * whose readers also catch up by themselves within KEPT_WITHOUT_NOTIFICATION_MS.
 */
export async function notifyAfterCommit(trx: Db, channel: string, payload: string): Promise<void> {
  await sql`select notify_after_commit(${channel}, ${payload})`.execute(trx);
}

/**
 * The notifications of the database `db` (opened by connect()): PostgreSQL's, listened for at `listenUrl` (a session
 * connection: sessionUrlOf(), never a transaction pooler, which would hand the LISTEN's server connection to others
 * and deliver nothing), else the embedded one's. Every LISTEN of a process goes through the one this returns.
 */
export function notificationsFor(db: Db, listenUrl: string | undefined, options: ListenOptions): Notifications {
  if (listenUrl) return postgresNotifications(listenUrl, options);
  const pglite = embeddedDatabaseOf(db);
  if (!pglite) throw new Error('notificationsFor: this Db was not opened by connect()');
  return channelHub(async (channel, deliver) => {
    await pglite.listen(channel, deliver);
  }, options.logger);
}

/**
 * Subscribers per channel over one way of listening: `listen(channel, deliver)` starts a channel's delivery. Once a
 * channel's LISTEN is in place its subscribers are told that they may have missed messages, since they may have
 * read their state before it was.
 */
function channelHub(listen: (channel: string, deliver: (payload: string) => void) => Promise<void>, logger: Logger) {
  const subscribers = new Map<string, Set<Subscriber>>();
  // Channels whose LISTEN is in place now: a later subscriber is told so at once (its `missed`), like the first ones.
  const listening = new Set<string>();
  const dispatch = (channel: string, payload: string) => {
    for (const subscriber of subscribers.get(channel) ?? []) subscriber.message(payload);
  };
  const missed = (channel: string) => {
    listening.add(channel);
    for (const subscriber of subscribers.get(channel) ?? []) subscriber.missed();
  };
  const lost = (channel: string) => {
    listening.delete(channel);
    for (const subscriber of subscribers.get(channel) ?? []) subscriber.lost?.();
  };
  const startListening = (channel: string) =>
    listen(channel, (payload) => dispatch(channel, payload)).then(
      () => missed(channel),
      (error: unknown) => {
        logger.warn({ err: error, channel }, 'could not listen for notifications; streams fall back to what they read');
        lost(channel);
      },
    );
  return {
    subscribers,
    dispatch,
    missed,
    lost,
    subscribe(channel: string, subscriber: Subscriber) {
      if (!CHANNEL.test(channel)) throw new Error(`not a notification channel name: ${channel}`);
      let set = subscribers.get(channel);
      if (!set) {
        subscribers.set(channel, (set = new Set()));
        void startListening(channel);
      } else if (listening.has(channel)) {
        queueMicrotask(() => set!.has(subscriber) && listening.has(channel) && subscriber.missed());
      }
      set.add(subscriber);
      return () => void set.delete(subscriber);
    },
    async close() {
      subscribers.clear();
      listening.clear();
    },
  };
}

/**
 * One dedicated pg connection, opened on the first subscription. Lost (server restart, terminated backend, network),
 * it is opened again after a backoff with jitter, LISTENs again on every channel and tells every subscriber that it
 * may have missed messages. Its failures are logged, never thrown: subscribers keep what they read.
 */
function postgresNotifications(databaseUrl: string, options: ListenOptions): Notifications {
  const { logger, timeoutMs } = options;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  let closed = false;

  const listenOn = async (target: pg.Client, channel: string) => {
    await target.query(`LISTEN ${target.escapeIdentifier(channel)}`);
  };

  const hub = channelHub(async (channel) => {
    ensureConnected();
    // A connection being opened LISTENs on every channel subscribed to by then, this one included.
    if (connecting) return connecting;
    const current = client;
    if (current) await listenOn(current, channel).catch((error: unknown) => lost(current, error));
  }, logger);

  function ensureConnected(): void {
    if (closed || client || connecting || retry) return;
    connecting = connectOnce().finally(() => (connecting = undefined));
  }

  async function connectOnce(): Promise<void> {
    const candidate = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      keepAlive: true,
      application_name: LISTENER_APPLICATION_NAME,
    });
    // Without a listener, an 'error' of this client would end the process.
    candidate.on('error', (error) => lost(candidate, error));
    candidate.on('end', () => lost(candidate, new Error('the listening connection ended')));
    candidate.on('notification', ({ channel, payload }) => hub.dispatch(channel, payload ?? ''));
    try {
      await candidate.connect();
      for (const channel of hub.subscribers.keys()) await listenOn(candidate, channel);
    } catch (error) {
      lost(candidate, error);
      return;
    }
    if (closed) return void candidate.end().catch(() => {});
    client = candidate;
    if (failures > 0) logger.info({ after: failures }, 'listening for notifications again');
    failures = 0;
    for (const channel of hub.subscribers.keys()) hub.missed(channel);
  }

  function lost(candidate: pg.Client, error: unknown): void {
    candidate.removeAllListeners('end');
    candidate.on('error', () => {}); // a second error of a dead client must not end the process
    void candidate.end().catch(() => {});
    if (client === candidate) {
      client = undefined;
      for (const channel of hub.subscribers.keys()) hub.lost(channel);
    }
    if (closed || retry) return;
    failures++;
    const backoff = Math.min(maxBackoffMs, (maxBackoffMs / 10) * 2 ** (failures - 1));
    const wait = backoff / 2 + Math.random() * (backoff / 2);
    logger.warn(
      { err: error, retryInMs: Math.round(wait) },
      'lost the connection that listens for notifications; reconnecting',
    );
    retry = setTimeout(() => {
      retry = undefined;
      ensureConnected();
    }, wait);
    retry.unref();
  }

  return {
    subscribe: hub.subscribe,
    async close() {
      closed = true;
      clearTimeout(retry);
      await hub.close();
      await connecting;
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners('end');
        await current.end().catch(() => {});
      }
    },
  };
}
