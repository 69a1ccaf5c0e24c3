// PostgreSQL serializes the commits of transactions that send a NOTIFY, across the whole server: PreCommit_Notify
// takes one exclusive lock and holds it through the commit's WAL flush, so that notifications queue in commit order.
// Nearly every student write announces something (its outbox row wakes the webhook relays, its xp drops the kept
// leaderboards, its stats delta the kept /stats, a readiness move the open streams), so every student's writes queued
// on that one lock, a flush at a time, whatever the number of hosts (docs/performance.md, "The write ceiling").
//
// So the service's own pooled connections carry the start-up setting `study_companion.notify_after_commit = on`
// (connect(), not behind a transaction pooler, which passes no start-up setting). In such a session the triggers and
// notify_after_commit() raise a notice naming the channel and payload instead of notifying
// (db/migrations/20261128_0101_notify_after_commit.ts). The driver reads notices from the statement's answer, at no
// cost of a round trip; this file keeps each connection's until its transaction ends, drops them when it rolled back,
// and once it has committed sends them in a statement of their own. That statement writes nothing, so its commit is
// not flushed while it holds the lock. Sends coalesce: a send waits COALESCE_MS for more, and what commits while one
// is on its way goes in the next.
//
// The price: a process that dies between a commit and its send loses that send, and nobody is told. Only messages with
// a second way go this way: the webhook relay polls (WEBHOOK_POLL_MS), the kept leaderboards and /stats are read again
// after KEPT_WITHOUT_NOTIFICATION_MS, and readiness streams read their moves again as often. Changes that must reach
// every process from the next request (a revoked grant, a plan) keep notifying by their commit (notifyOnCommit).
import type { EventEmitter } from 'node:events';
import type pg from 'pg';

/** The session setting that asks for notices instead of notifications. */
export const NOTIFY_AFTER_COMMIT_SETTING = 'study_companion.notify_after_commit';

/** The start-up options (pg's `options`) of a connection whose writes are announced after their commit. */
export const NOTIFY_AFTER_COMMIT_OPTIONS = `-c ${NOTIFY_AFTER_COMMIT_SETTING}=on`;

/**
 * The longest a process keeps what a notification sent after commit drops, or waits to read what one announces, so that
 * a message lost with a dying process leaves nothing stale for longer.
 */
export const KEPT_WITHOUT_NOTIFICATION_MS = 30_000;

/**
 * How long the first message of a send waits for others. Each send is a statement of its own, so that without a wait
 * a busy process would add one to every write; at a thousand writes a second this makes it one per ten or so, and it
 * costs the announcements 10 ms of their targets (a webhook's first attempt 100 ms, a stream's event 50 ms).
 */
const COALESCE_MS = 10;

/** The notice's message (its detail is the channel, its hint the payload). */
const NOTICE = 'study_companion.notify';

type Message = readonly [channel: string, payload: string];

/**
 * Sends, after each commit on a connection of `pool`, what the transaction asked to notify after commit. Every
 * connection of the pool must carry NOTIFY_AFTER_COMMIT_OPTIONS. A failed send is reported to `onError` and dropped
 * (the messages are hints; see above). `coalesceMs`: how long a send waits for more (a test lengthens it).
 */
export function sendNotificationsAfterCommit(
  pool: pg.Pool,
  onError: (error: Error) => void,
  coalesceMs = COALESCE_MS,
): void {
  const sender = coalescingSender(pool, onError, coalesceMs);
  pool.on('connect', (client) => followTransactions(client, sender.send));
  // A stopping process sends what its last commits announced before its pool closes (Kysely's destroy ends it).
  const end = pool.end.bind(pool);
  pool.end = (async () => {
    await sender.drained();
    return end();
  }) as pg.Pool['end'];
}

/** Collects a client's notices per transaction and hands them to `send` when the transaction commits. */
function followTransactions(client: pg.PoolClient, send: (messages: Iterable<Message>) => void): void {
  // pg's protocol events: the client itself turns them into its query results, and so does this.
  const connection = (client as unknown as { connection: EventEmitter }).connection;
  let pending: Map<string, Message> | undefined;
  let inTransaction = false;
  let failed = false;
  let lastCommand = '';
  client.on('notice', (notice: { message?: string; detail?: string; hint?: string }) => {
    if (notice.message !== NOTICE || !notice.detail) return;
    const message: Message = [notice.detail, notice.hint ?? ''];
    (pending ??= new Map()).set(`${message[0]}\u0000${message[1]}`, message);
  });
  connection.on('errorMessage', () => (failed = true));
  connection.on('commandComplete', (complete: { text: string }) => (lastCommand = complete.text));
  connection.on('readyForQuery', (ready: { status: string }) => {
    // 'T' in a transaction, 'E' in a failed one: what ends it (COMMIT, or ROLLBACK, which a failed one's COMMIT
    // answers too) decides. 'I': a statement in autocommit ended (committed unless it failed), or a transaction did.
    if (ready.status !== 'I') return void (inTransaction = true);
    const committed = inTransaction ? lastCommand === 'COMMIT' : !failed;
    if (committed && pending) send(pending.values());
    pending = undefined;
    inTransaction = false;
    failed = false;
    lastCommand = '';
  });
}

/**
 * One statement on its way at a time, sent `coalesceMs` after the first message it carries; what arrives meanwhile goes
 * in it or in the next one, duplicates once.
 */
function coalescingSender(pool: pg.Pool, onError: (error: Error) => void, coalesceMs: number) {
  let queued = new Map<string, Message>();
  let sending: Promise<void> | undefined;
  const drain = async () => {
    await new Promise((resolve) => setTimeout(resolve, coalesceMs));
    try {
      while (queued.size > 0) {
        const messages = [...queued.values()];
        queued = new Map();
        // Named: parsed once per connection, since a write's announcement is a statement of every write.
        await pool.query({
          name: 'study_companion_notify_after_commit',
          text: 'select pg_notify(channel, payload) from unnest($1::text[], $2::text[]) as message(channel, payload)',
          values: [messages.map(([channel]) => channel), messages.map(([, payload]) => payload)],
        });
      }
    } catch (error) {
      queued = new Map();
      onError(error as Error);
    } finally {
      sending = undefined;
    }
  };
  return {
    send(messages: Iterable<Message>) {
      for (const message of messages) queued.set(`${message[0]}\u0000${message[1]}`, message);
      if (queued.size > 0) sending ??= drain();
    },
    /** Resolves once nothing is queued or on its way. */
    async drained() {
      while (sending) await sending;
    },
  };
}
