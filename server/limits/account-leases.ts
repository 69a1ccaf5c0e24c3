// How many of one account's requests hold a resource at once (the AI tutor's replies in flight): each holder takes a
// lease and gives it back when done. Counted in this process's memory here, or in Redis across every process
// (server/limits/redis-limit-stores.ts), where each lease expires unless its holder renews it, so a process that dies
// holding leases frees them within a TTL instead of leaking its count forever.
//
// A lease may name a group (a conversation): a group has at most one lease at a time, whatever the account's limit.

export interface LeaseRequest {
  /** Whose count this is (a user id). */
  account: string;
  /** At most one lease per group at a time (e.g. a conversation id); undefined: no group. */
  group?: string | undefined;
  /** Leases the account may hold at once. */
  limit: number;
}

export interface Lease {
  /** Gives the lease back; a second call does nothing. */
  release(): void;
}

export type LeaseResult =
  | { kind: 'held'; lease: Lease }
  /** `account`: the account holds `limit` leases already; `group`: the group has its one lease. */
  | { kind: 'refused'; reason: 'account' | 'group' };

export interface AccountLeases {
  acquire(request: LeaseRequest): Promise<LeaseResult>;
  /** Leases held now by the account, as this store counts them (for tests and metrics). */
  held(account: string): Promise<number>;
}

/** Leases counted in this process: exact, and gone with the process. */
export function memoryLeases(): AccountLeases {
  /** Per account, the group of each lease held ('' for none). */
  const byAccount = new Map<string, Map<symbol, string>>();
  return {
    async acquire({ account, group, limit }) {
      const leases = byAccount.get(account) ?? new Map<symbol, string>();
      if (group !== undefined && [...leases.values()].includes(group)) return { kind: 'refused', reason: 'group' };
      if (leases.size >= limit) return { kind: 'refused', reason: 'account' };
      const id = Symbol(account);
      leases.set(id, group ?? '');
      byAccount.set(account, leases);
      return {
        kind: 'held',
        lease: {
          release() {
            if (!leases.delete(id)) return;
            if (leases.size === 0 && byAccount.get(account) === leases) byAccount.delete(account);
          },
        },
      };
    },
    held: async (account) => byAccount.get(account)?.size ?? 0,
  };
}
