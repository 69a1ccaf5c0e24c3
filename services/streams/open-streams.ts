// The open streams of an account, whatever their kind (the readiness stream today, more later): one bound for them all,
// counted per account (never per key: a second key does not double it) in the database, so that it holds across every
// process (db/queries/open-streams.ts). Each stream's row is a lease this process renews in one statement for all its
// streams; the rows of a process that died lapse on their own. The place is taken before the stream answers 200, and
// freed when the stream ends, whoever ends it.
//
// A stream outlives the request that authenticated it, so its credential is checked again whenever the account's
// principals change (the commit's NOTIFY on PRINCIPALS_CHANNEL, from any process, or this process's own commit): a
// deleted account, a revoked grant, token or key ends the account's affected streams with a final reason.
//
// Opening a stream costs the database a transaction that waits for the account's lock, so the opens of one account
// go in line in this process (keyed-line.ts): one of them holds a pool connection at a time, and a client that opens
// streams in bursts queues in memory, never on the pool every other account needs. More opens in line than the
// account has places cannot all be admitted: beyond that the answer is the same 429, at once.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import type { Notifications } from '../../db/notifications.ts';
import {
  closeStream,
  deleteLapsedStreams,
  openStreamIfRoom,
  renewStreams,
  type Opened,
} from '../../db/queries/open-streams.ts';
import { onPrincipalsCommitted, PRINCIPALS_CHANNEL } from '../../db/queries/principal-changes.ts';
import { standingCredentials } from '../../db/queries/principals.ts';
import type { Credential } from '../../server/auth/principal.ts';
import { AuthenticationError, LimitError } from '../../domain/errors.ts';
import { keyedLine } from './keyed-line.ts';

export interface OpenStreamLimits {
  /** Streams one account may hold open at once, of every kind together. */
  max: number;
  /** How long a stream's place stays taken without a renewal: what a process that dies leaves behind, at most. */
  leaseMs: number;
  /** Between two renewals of this process's leases (well under `leaseMs`, so a slow renewal does not lose one). */
  renewMs: number;
}

/**
 * Ten: a student's phone, tablet and laptop with a few tabs each (a browser keeps at most six HTTP/1.1 connections
 * per site, so one browser cannot hold more than six), plus room for the study-room stream to come. Slack allows an
 * app ten Socket Mode connections at once; one account here is one person.
 */
export const OPEN_STREAM_LIMITS: OpenStreamLimits = { max: 10, leaseMs: 45_000, renewMs: 15_000 };

/** Retry-After of an open refused because the account's line is full: the opens in it are decided in moments. */
const BUSY_RETRY_AFTER_MS = 1_000;

/** Why a stream must end before its time; the stream tells its client in its last event. */
export type StreamRevocation = 'account_deleted' | 'credential_revoked' | 'lease_lost';

export interface StreamHolder {
  user_id: string;
  credential: Credential;
}

export interface StreamPlace {
  /** The stream's row in open_streams: what tells whether its lease still stands. */
  readonly id: string;
  /** Frees the place (once; later calls do nothing). */
  release(): Promise<void>;
}

export interface OpenStreams {
  /**
   * Takes one of the account's places for a stream of `kind`, or throws a 429 `too_many_streams` problem with
   * Retry-After. `revoked` is called (once) when the stream must end: its account or credential is gone, or its place
   * was lost (its row deleted).
   */
  take(holder: StreamHolder, kind: string, revoked: (why: StreamRevocation) => void): Promise<StreamPlace>;
  /** Streams this process holds now. */
  readonly held: number;
}

interface Held {
  holder: StreamHolder;
  revoked: (why: StreamRevocation) => void;
  /** Its row is being written: a renewal must not take it for lost. */
  writing: boolean;
}

export function openStreams(
  db: Db,
  notifications: Notifications,
  options: { limits?: OpenStreamLimits; onError: (error: unknown) => void },
): OpenStreams {
  const limits = options.limits ?? OPEN_STREAM_LIMITS;
  const held = new Map<string, Held>();
  const byAccount = new Map<string, Set<string>>();
  const opening = keyedLine(limits.max);
  let renewal: NodeJS.Timeout | undefined;

  const hold = (id: string, entry: Held) => {
    held.set(id, entry);
    byAccount.set(entry.holder.user_id, (byAccount.get(entry.holder.user_id) ?? new Set()).add(id));
    renewal ??= setInterval(() => void renew().catch(options.onError), limits.renewMs).unref();
  };
  const forget = (id: string): Held | undefined => {
    const entry = held.get(id);
    if (!entry) return undefined;
    held.delete(id);
    const ids = byAccount.get(entry.holder.user_id);
    ids?.delete(id);
    if (ids?.size === 0) byAccount.delete(entry.holder.user_id);
    if (held.size === 0) {
      clearInterval(renewal);
      renewal = undefined;
    }
    return entry;
  };
  const revoke = (id: string, why: StreamRevocation) => forget(id)?.revoked(why);

  /** Ends the streams of `userId` held here whose account or credential no longer stands. */
  const recheck = async (userId: string): Promise<void> => {
    const entries = [...(byAccount.get(userId) ?? [])].map((id) => [id, held.get(id)!] as const);
    if (entries.length === 0) return;
    const standing = await standingCredentials(
      db,
      userId,
      credentialIds(entries.map(([, entry]) => entry.holder.credential)),
    );
    for (const [id, { holder }] of entries) {
      if (!standing.account) revoke(id, 'account_deleted');
      else if (!stands(standing, holder.credential)) revoke(id, 'credential_revoked');
    }
  };
  const recheckSafely = (userId: string) => void recheck(userId).catch(options.onError);

  const renew = async () => {
    await deleteLapsedStreams(db);
    const ids = [...held].flatMap(([id, entry]) => (entry.writing ? [] : [id]));
    const renewed = await renewStreams(db, ids, limits.leaseMs);
    const lost = ids.filter((id) => !renewed.has(id) && held.has(id));
    // A row deleted under a live stream: its credential was revoked (said so if it was), or its lease lapsed.
    for (const userId of new Set(lost.map((id) => held.get(id)!.holder.user_id))) await recheck(userId);
    for (const id of lost) revoke(id, 'lease_lost');
  };

  notifications.subscribe(PRINCIPALS_CHANNEL, {
    message: (userId) => (userId ? recheckSafely(userId) : [...byAccount.keys()].forEach(recheckSafely)),
    // Changes may have been missed while nothing listened: check every account that holds a stream here, one after
    // the other, so that a reconnection does not ask the pool for every account at once.
    missed: () =>
      void (async () => {
        for (const userId of [...byAccount.keys()]) await recheck(userId).catch(options.onError);
      })(),
  });
  // A change committed by this process reaches its own streams before its NOTIFY does.
  onPrincipalsCommitted(db, recheckSafely);

  return {
    get held() {
      return held.size;
    },
    async take(holder, kind, revoked) {
      const { credential } = holder;
      // Held (and so rechecked on a change) before the row is written: a revocation that commits after the check
      // below is announced after it, and finds the stream here.
      const id = randomUUID();
      let once = false;
      const entry: Held = { holder, revoked: (why) => void (once || ((once = true), revoked(why))), writing: true };
      hold(id, entry);
      let opened: Opened;
      try {
        const row = {
          id,
          user_id: holder.user_id,
          kind,
          grant_id: credential.grant_id,
          key_id: credential.kind === 'api_key' ? credential.key_id : null,
        };
        const inLine = opening.tryRun(holder.user_id, () =>
          openStreamIfRoom(db, row, limits, async (trx) =>
            stands(await standingCredentials(trx, holder.user_id, credentialIds([credential])), credential),
          ),
        );
        opened = (await inLine) ?? { refused: true, retryAfterMs: BUSY_RETRY_AFTER_MS };
      } catch (error) {
        forget(id);
        throw error;
      }
      entry.writing = false;
      if (!('opened' in opened)) {
        forget(id);
        if ('unauthorized' in opened)
          throw new AuthenticationError('The access token or API key was revoked.', 'invalid_token');
        const retryAfterSeconds = Math.max(1, Math.ceil(opened.retryAfterMs / 1000));
        const detail = `This account has ${limits.max} streams open, the most it may hold at once (whichever key or token opened them); close one, or retry in ${retryAfterSeconds} seconds.`;
        throw new LimitError('too_many_streams', detail, { max: limits.max, retryAfterSeconds });
      }
      let released = false;
      return {
        id,
        async release() {
          if (released) return;
          released = true;
          forget(id);
          // A row left behind by a failed delete lapses with its lease.
          await closeStream(db, id).catch(options.onError);
        },
      };
    },
  };
}

function credentialIds(credentials: readonly Credential[]) {
  const grantIds = new Set<string>();
  const keyIds = new Set<string>();
  for (const credential of credentials) {
    if (credential.kind === 'access_token') grantIds.add(credential.grant_id);
    else keyIds.add(credential.key_id);
  }
  return { grantIds: [...grantIds], keyIds: [...keyIds] };
}

function stands(standing: Awaited<ReturnType<typeof standingCredentials>>, credential: Credential): boolean {
  if (!standing.account) return false;
  return credential.kind === 'access_token'
    ? standing.grantIds.has(credential.grant_id)
    : standing.keyIds.has(credential.key_id);
}
