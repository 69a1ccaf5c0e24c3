// One mechanism for every per-account resource held over time (open streams, exports, AI replies, and what comes
// next): each held resource is a leased row of account_leases (db/queries/account-leases.ts), so that a bound holds
// across every process. This process renews all the leases it holds in one statement every third of their time,
// and sweeps the lapsed rows of any process then; the rows of a process that died lapse on their own and are not
// counted. The lease is taken before the work starts and given back when it ends, whoever ends it.
//
// A lease outlives the request that authenticated it, so its credential is checked again whenever the account's
// principals change (the commit's NOTIFY on PRINCIPALS_CHANNEL, from any process, or this process's own commit): a
// deleted account, a revoked grant, token or key ends the holder's affected leases with a reason; a renewal that
// finds a row gone ends its lease with `lease_lost`.
//
// Taking a lease costs the database a transaction that waits for the account's lock, so the takes of one account and
// kind go in line in this process (keyed-line.ts): one of them holds a pool connection at a time, and a client that
// asks in bursts queues in memory, never on the pool every other account needs. More takes in line than the bound
// cannot all succeed: beyond that the refusal comes at once.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import type { Notifications } from '../../db/notifications.ts';
import {
  deleteLapsedLeases,
  releaseLease,
  renewLeases,
  takeLeaseIfRoom,
  type Taken,
} from '../../db/queries/account-leases.ts';
import { onPrincipalsCommitted, PRINCIPALS_CHANNEL } from '../../db/queries/principal-changes.ts';
import { standingCredentials } from '../../db/queries/principals.ts';
import type { Credential } from '../../server/auth/principal.ts';
import { AuthenticationError } from '../../domain/errors.ts';
import { LEASE_TTL_MS } from '../../domain/bounds.ts';
import { keyedLine, type KeyedLine } from './keyed-line.ts';

/** Why a lease ends before its holder gives it back; a stream tells its client in its last event. */
export type LeaseLoss = 'account_deleted' | 'credential_revoked' | 'lease_lost';

export interface LeaseHolder {
  user_id: string;
  /** What authenticated the request that takes it: its revocation ends the lease. Undefined: only the account's end does. */
  credential?: Credential | undefined;
}

export interface LeaseRequest {
  /** What is held (`stream`, `export`, `ai_reply`): the account's bound counts the live leases of the kind. */
  kind: string;
  /** What it holds within the kind (a stream's room, a reply's conversation). */
  group?: string | undefined;
  /** Live leases of the kind one account may hold. */
  limit: number;
  /** Live leases of the kind and `group` one account may hold; undefined: only `limit` counts. */
  perGroup?: number | undefined;
}

export interface Lease {
  /** The lease's row: what tells whether it still stands. */
  readonly id: string;
  /** Gives the lease back (once; later calls do nothing). A row left behind by a failed delete lapses. */
  release(): Promise<void>;
}

/** Refused: the account or the group holds its bound (or the account's line is full), and when to retry. */
export type LeaseRefusal = { refused: 'account' | 'group'; retryAfterMs: number };

export interface AccountLeases {
  /**
   * Takes a lease, or says why not; throws an AuthenticationError when the holder's credential no longer stands.
   * `lost` is called (once) when the lease ends before its release: its account or credential is gone, or its row.
   */
  take(holder: LeaseHolder, request: LeaseRequest, lost: (why: LeaseLoss) => void): Promise<Lease | LeaseRefusal>;
  /** Leases this process holds now. */
  readonly held: number;
}

/** Retry-After of a take refused because the account's line is full: the takes in it are decided in moments. */
const BUSY_RETRY_AFTER_MS = 1_000;

interface Held {
  holder: LeaseHolder;
  lost: (why: LeaseLoss) => void;
  /** Its row is being written: a renewal must not take it for lost. */
  writing: boolean;
}

export function accountLeases(
  db: Db,
  notifications: Notifications,
  options: { ttlMs?: number; onError: (error: unknown) => void },
): AccountLeases {
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  const held = new Map<string, Held>();
  const byAccount = new Map<string, Set<string>>();
  /** One line per account and kind, as long as the kind's bound (created on first use: bounds differ by kind). */
  const lines = new Map<number, KeyedLine>();
  const lineFor = (limit: number) => lines.get(limit) ?? lines.set(limit, keyedLine(limit)).get(limit)!;
  let renewal: NodeJS.Timeout | undefined;

  const hold = (id: string, entry: Held) => {
    held.set(id, entry);
    byAccount.set(entry.holder.user_id, (byAccount.get(entry.holder.user_id) ?? new Set()).add(id));
    renewal ??= setInterval(() => void renew().catch(options.onError), ttlMs / 3).unref();
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
  const end = (id: string, why: LeaseLoss) => forget(id)?.lost(why);

  /** Ends the leases of `userId` held here whose account or credential no longer stands. */
  const recheck = async (userId: string): Promise<void> => {
    const entries = [...(byAccount.get(userId) ?? [])].map((id) => [id, held.get(id)!] as const);
    if (entries.length === 0) return;
    const credentials = entries.flatMap(([, entry]) => (entry.holder.credential ? [entry.holder.credential] : []));
    const standing = await standingCredentials(db, userId, credentialIds(credentials));
    for (const [id, { holder }] of entries) {
      if (!standing.account) end(id, 'account_deleted');
      else if (!stands(standing, holder.credential)) end(id, 'credential_revoked');
    }
  };
  const recheckSafely = (userId: string) => void recheck(userId).catch(options.onError);

  const renew = async () => {
    await deleteLapsedLeases(db);
    const ids = [...held].flatMap(([id, entry]) => (entry.writing ? [] : [id]));
    const renewed = await renewLeases(db, ids, ttlMs);
    const lost = ids.filter((id) => !renewed.has(id) && held.has(id));
    // A row deleted under a live lease: its credential was revoked (said so if it was), or its lease lapsed.
    for (const userId of new Set(lost.map((id) => held.get(id)!.holder.user_id))) await recheck(userId);
    for (const id of lost) end(id, 'lease_lost');
  };

  notifications.subscribe(PRINCIPALS_CHANNEL, {
    message: (userId) => (userId ? recheckSafely(userId) : [...byAccount.keys()].forEach(recheckSafely)),
    // Changes may have been missed while nothing listened: check every account that holds a lease here, one after
    // the other, so that a reconnection does not ask the pool for every account at once.
    missed: () =>
      void (async () => {
        for (const userId of [...byAccount.keys()]) await recheck(userId).catch(options.onError);
      })(),
  });
  // A change committed by this process reaches its own leases before its NOTIFY does.
  onPrincipalsCommitted(db, recheckSafely);

  return {
    get held() {
      return held.size;
    },
    async take(holder, request, lost) {
      const { credential } = holder;
      // Held (and so rechecked on a change) before the row is written: a revocation that commits after the check
      // below is announced after it, and finds the lease here.
      const id = randomUUID();
      let once = false;
      const entry: Held = { holder, lost: (why) => void (once || ((once = true), lost(why))), writing: true };
      hold(id, entry);
      let taken: Taken;
      try {
        const row = {
          id,
          user_id: holder.user_id,
          kind: request.kind,
          grp: request.group ?? null,
          grant_id: credential?.grant_id ?? null,
          key_id: credential?.kind === 'api_key' ? credential.key_id : null,
        };
        const bound = { limit: request.limit, perGroup: request.perGroup, leaseMs: ttlMs };
        const inLine = lineFor(request.limit).tryRun(`${holder.user_id} ${request.kind}`, () =>
          takeLeaseIfRoom(db, row, bound, async (trx) =>
            stands(
              await standingCredentials(trx, holder.user_id, credentialIds(credential ? [credential] : [])),
              credential,
            ),
          ),
        );
        taken = (await inLine) ?? { refused: 'account', retryAfterMs: BUSY_RETRY_AFTER_MS };
      } catch (error) {
        forget(id);
        throw error;
      }
      entry.writing = false;
      if (!('taken' in taken)) {
        forget(id);
        if ('unauthorized' in taken)
          throw new AuthenticationError('The access token or API key was revoked.', 'invalid_token');
        return taken;
      }
      let released = false;
      return {
        id,
        async release() {
          if (released) return;
          released = true;
          forget(id);
          await releaseLease(db, id).catch(options.onError);
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

function stands(
  standing: Awaited<ReturnType<typeof standingCredentials>>,
  credential: Credential | undefined,
): boolean {
  if (!standing.account) return false;
  if (!credential) return true;
  return credential.kind === 'access_token'
    ? standing.grantIds.has(credential.grant_id)
    : standing.keyIds.has(credential.key_id);
}
