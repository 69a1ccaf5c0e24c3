// The accounts' places for AI replies (server/limits/account-leases.ts), in this process and in Redis: the count, the one
// lease per conversation, a dead process's leases expiring, live ones renewed, and Redis going away.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { memoryLeases, type AccountLeases, type LeaseResult } from '../../server/limits/account-leases.ts';
import type { LimitStores } from '../../server/limits/rate-limits.ts';
import { redisLimitStores } from '../../server/limits/redis-limit-stores.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

const redisUrl = process.env.REDIS_URL;
const prefix = () => `ai-leases-test:${randomBytes(4).toString('hex')}:`;

function held(result: LeaseResult) {
  assert.equal(result.kind, 'held', JSON.stringify(result));
  return (result as Extract<LeaseResult, { kind: 'held' }>).lease;
}

/** Polls `probe` until it is true, for at most 10 s: how long a lease lasts is Redis's clock, not this test's. */
async function eventually(probe: () => Promise<boolean>, what: string): Promise<number> {
  let attempts = 0;
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    attempts++;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return attempts;
}

function countsAndGroups(name: string, make: () => Promise<{ leases: AccountLeases; close(): Promise<void> }>) {
  it(`${name}: at most \`limit\` leases per account, one per group, free again once released`, async () => {
    const { leases, close } = await make();
    try {
      const a = held(await leases.acquire({ account: 'alice', limit: 2 }));
      const b = held(await leases.acquire({ account: 'alice', group: 'conversation-1', limit: 2 }));
      assert.deepEqual(await leases.acquire({ account: 'alice', limit: 2 }), { kind: 'refused', reason: 'account' });
      assert.deepEqual(await leases.acquire({ account: 'alice', group: 'conversation-1', limit: 5 }), {
        kind: 'refused',
        reason: 'group',
      });
      held(await leases.acquire({ account: 'bob', limit: 2 })).release();
      assert.equal(await leases.held('alice'), 2);

      b.release();
      b.release();
      assert.equal(await leases.held('alice'), 1, 'a second release does nothing');
      held(await leases.acquire({ account: 'alice', group: 'conversation-1', limit: 2 })).release();
      a.release();
      assert.equal(await leases.held('alice'), 0);
    } finally {
      await close();
    }
  });
}

describe('account leases (AI replies in flight)', () => {
  countsAndGroups('in this process', async () => ({ leases: memoryLeases(), close: async () => {} }));

  describe('in Redis', function () {
    before(function () {
      if (!redisUrl) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
    });

    countsAndGroups('shared', async () => {
      const stores = await redisLimitStores(redisUrl!, { keyPrefix: prefix() });
      const close = async () => {
        assert.equal(stores.failures.byScope.size, 0, 'counted in Redis, not in this process instead');
        await stores.close();
      };
      return { leases: stores.leases('ai-replies'), close };
    });

    it('are one count for every process: two processes never hand out more than the limit between them', async () => {
      const keyPrefix = prefix();
      const processes = [
        await redisLimitStores(redisUrl!, { keyPrefix }),
        await redisLimitStores(redisUrl!, { keyPrefix }),
      ];
      try {
        const [one, two] = processes.map((stores) => stores.leases('ai-replies'));
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? one! : two!).acquire({ account: 'alice', limit: 2 })),
        );
        assert.equal(results.filter((r) => r.kind === 'held').length, 2);
        assert.equal(await two!.held('alice'), 2);
      } finally {
        await Promise.all(processes.map((stores) => stores.close()));
      }
    });

    it('of a process that died expire after their TTL; a live holder’s are renewed past it', async () => {
      const keyPrefix = prefix();
      const ttlMs = 1_500;
      const [dying, living] = [
        await redisLimitStores(redisUrl!, { keyPrefix }),
        await redisLimitStores(redisUrl!, { keyPrefix }),
      ];
      try {
        held(await dying.leases('ai-replies', ttlMs).acquire({ account: 'alice', limit: 1 }));
        const renewed = held(await living.leases('ai-replies', ttlMs).acquire({ account: 'bob', limit: 1 }));
        await dying.close(); // as a crash: no release, no renewal

        const leases = living.leases('ai-replies', ttlMs);
        assert.deepEqual(
          await leases.acquire({ account: 'alice', limit: 1 }),
          { kind: 'refused', reason: 'account' },
          'still counted at first',
        );
        const started = Date.now();
        await eventually(async () => (await leases.held('alice')) === 0, 'the dead process’s lease expired');
        assert.ok(Date.now() - started < 10_000);
        assert.deepEqual(
          await leases.acquire({ account: 'bob', limit: 1 }),
          { kind: 'refused', reason: 'account' },
          'renewed while its holder lives',
        );
        renewed.release();
        held(await leases.acquire({ account: 'alice', limit: 1 })).release();
      } finally {
        await living.close();
      }
    });

    it('are counted in this process while Redis is away (the bound holds per process, never open), and in Redis again once it is back', async () => {
      const redis = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
      const warnings: unknown[] = [];
      let stores: LimitStores | undefined;
      try {
        stores = await redisLimitStores(proxy.urlFor(redisUrl!), {
          keyPrefix: prefix(),
          timeoutMs: 300,
          logger: { warn: ((details: unknown) => void warnings.push(details)) as never },
        });
        const leases = stores.leases('ai-replies');
        const inRedis = held(await leases.acquire({ account: 'alice', limit: 2 }));

        await proxy.stop();
        const local = held(await leases.acquire({ account: 'alice', limit: 2 }));
        held(await leases.acquire({ account: 'alice', limit: 2 }));
        assert.deepEqual(
          await leases.acquire({ account: 'alice', limit: 2 }),
          { kind: 'refused', reason: 'account' },
          'still 2 in this process',
        );
        assert.deepEqual(stores.failures.byScope.get('ai-replies'), { allowed: 3, refused: 0 });
        assert.equal(warnings.length, 1, 'one warning, not one per request');

        await proxy.start();
        local.release();
        await eventually(
          () =>
            leases.held('nobody').then(
              () => true,
              () => false,
            ),
          'Redis answers again',
        );
        assert.deepEqual(
          await leases.acquire({ account: 'alice', limit: 1 }),
          { kind: 'refused', reason: 'account' },
          'counted in Redis again, where the lease taken before the outage still counts',
        );
        inRedis.release();
        held(await leases.acquire({ account: 'alice', limit: 1 })).release();
      } finally {
        await stores?.close();
        await proxy.close();
      }
    });
  });
});
