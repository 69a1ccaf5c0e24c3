// Account leases in Redis (server/limits/account-leases.ts), shared by every process: one sorted set per account, a member
// per lease (`<lease id>|<group>`) scored by when it expires, by Redis's own clock so that processes' clocks never
// disagree. A holder renews its lease while it holds it; a process that dies stops renewing, and its leases drop
// out of the count within LEASE_TTL_MS. One script takes a lease: it drops the expired ones, then checks the group
// and the count, so two processes can never both take the last place.
import { randomUUID } from 'node:crypto';
import { defineScript } from 'redis';
import { memoryLeases, type AccountLeases, type Lease, type LeaseResult } from './account-leases.ts';

/** How long a lease outlives its holder's last renewal: the longest a dead process's count lingers. */
export const LEASE_TTL_MS = 30_000;

/**
 * KEYS[1]: the account's leases; ARGV: the new member, its group ('' none), the limit, the TTL in ms. Returns
 * {1, held} when taken, {0, held, 1} when the group has a lease, {0, held, 0} when the account holds `limit`.
 */
export const ACQUIRE_LEASE_SCRIPT = defineScript({
  NUMBER_OF_KEYS: 1,
  SCRIPT: `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if ARGV[2] ~= '' then
  local suffix = '|' .. ARGV[2]
  for _, member in ipairs(members) do
    if string.sub(member, -#suffix) == suffix then return {0, #members, 1} end
  end
end
if #members >= tonumber(ARGV[3]) then return {0, #members, 0} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, #members + 1}`,
  parseCommand(parser, key: string, member: string, group: string, limit: number, ttlMs: number) {
    parser.pushKey(key);
    parser.push(member, group, String(limit), String(ttlMs));
  },
  transformReply: (reply: unknown) => reply as number[],
});

/** KEYS[1]: the account's leases; ARGV: the member, the TTL in ms. Pushes the member's expiry (re-adds a lost one). */
export const RENEW_LEASE_SCRIPT = defineScript({
  NUMBER_OF_KEYS: 1,
  SCRIPT: `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  parseCommand(parser, key: string, member: string, ttlMs: number) {
    parser.pushKey(key);
    parser.push(member, String(ttlMs));
  },
  transformReply: (reply: unknown) => reply as number,
});

/** What the leases need of the Redis client, each call already bounded in time. */
export interface LeaseCommands {
  acquire(key: string, member: string, group: string, limit: number, ttlMs: number): Promise<number[]>;
  renew(key: string, member: string, ttlMs: number): Promise<unknown>;
  release(key: string, member: string): Promise<unknown>;
  count(key: string): Promise<number>;
}

/**
 * Leases counted in Redis under `keyPrefix`. When Redis fails or is too slow, a request is counted in this process
 * instead (`onFailure` is told): the bound then holds per process, never open, and Redis takes over again on its
 * return. A lease whose release fails expires by itself.
 */
export function redisLeases(
  commands: LeaseCommands,
  keyPrefix: string,
  onFailure: (error: unknown) => void,
  ttlMs = LEASE_TTL_MS,
): AccountLeases {
  const local = memoryLeases();
  return {
    async acquire({ account, group, limit }): Promise<LeaseResult> {
      const key = keyPrefix + account;
      const member = `${randomUUID()}|${group ?? ''}`;
      let reply: number[];
      try {
        reply = await commands.acquire(key, member, group ?? '', limit, ttlMs);
      } catch (error) {
        onFailure(error);
        return local.acquire({ account, group, limit });
      }
      if (reply[0] !== 1) return { kind: 'refused', reason: reply[2] === 1 ? 'group' : 'account' };
      return { kind: 'held', lease: renewedLease(commands, key, member, ttlMs) };
    },
    async held(account) {
      return (await commands.count(keyPrefix + account)) + (await local.held(account));
    },
  };
}

/** Renewed three times per TTL, so one or two failed renewals (a Redis blip) do not lose the lease. */
function renewedLease(commands: LeaseCommands, key: string, member: string, ttlMs: number): Lease {
  const timer = setInterval(() => void commands.renew(key, member, ttlMs).catch(() => {}), ttlMs / 3);
  timer.unref();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      commands.release(key, member).catch(() => {});
    },
  };
}
