// A sync push pays per command: each command not applied before counts one request against the account's per-minute
// and per-day limits, as its REST operation would, so batching is no way around them; the commands past what is left
// answer 429 rate_limited, unapplied, and a replayed command costs nothing. On the counters in memory and in Redis
// (when REDIS_URL is set), which keep the counts the edge keeps.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { setPlan } from '../../../db/queries/users.ts';
import { memoryLimitStores, type LimitStores } from '../../../server/limits/rate-limits.ts';
import { redisLimitStores } from '../../../server/limits/redis-limit-stores.ts';
import { generalApp, type Student } from '../../support/general-app.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
type Result = { uuid: string; status: string; object?: Record<string, unknown>; error?: Record<string, unknown> };
const DUE = '2026-12-08T09:00:00Z';
const FREE_PER_MINUTE = 60;

const taskAdds = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({
    uuid: randomUUID(),
    type: 'task_add',
    args: { title: `Task ${from + i}`, due_at: DUE, course: null },
  }));

async function push(ctx: Ctx, student: Student, commands: object[], status = 200) {
  return ctx.api.post('/api/sync/commands').set(student.headers).send({ commands }).expect(status);
}

async function taskCount(ctx: Ctx, student: Student): Promise<number> {
  const row = await ctx.db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', student.id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function taskStatus(ctx: Ctx, id: string): Promise<string | undefined> {
  return (await ctx.db.selectFrom('tasks').select('status').where('id', '=', id).executeTakeFirst())?.status;
}

/** `r` of one window in a RateLimit header ("minute"; r=…; t=…, "day"; r=…; t=…). */
function remaining(header: unknown, window: 'minute' | 'day'): number {
  const match = new RegExp(`"${window}"; r=(\\d+)`).exec(String(header));
  assert.ok(match, `no "${window}" in RateLimit: ${String(header)}`);
  return Number(match[1]);
}

const statuses = (results: Result[]) => results.map((r) => (r.status === 'ok' ? 'ok' : String(r.error!.code)));

for (const kind of ['memory', 'Redis'] as const) {
  describe(`pushSyncCommands against the account's request limits, counted in ${kind}`, function () {
    let stores: LimitStores;
    before(async function () {
      if (kind === 'memory') return void (stores = memoryLimitStores());
      if (!process.env.REDIS_URL) this.skip(); // needs a real Redis: .ci/run sets REDIS_URL
      stores = await redisLimitStores(process.env.REDIS_URL!, {
        keyPrefix: `rl:test:${randomBytes(4).toString('hex')}:`,
      });
    });
    after(() => stores?.close());

    it(`a free account applies at most ${FREE_PER_MINUTE} commands a minute, however it batches them`, async () => {
      const ctx = await generalApp({ limitStores: stores });
      const alice = await ctx.newStudent();
      await ctx.api.get('/api/tasks').set(alice.headers).expect(200); // one request of the minute spent elsewhere

      const first = await push(ctx, alice, taskAdds(30));
      assert.deepEqual(statuses(first.body.results), Array(30).fill('ok'));
      assert.equal(remaining(first.headers['ratelimit'], 'minute'), FREE_PER_MINUTE - 31);
      assert.equal(first.headers['retry-after'], undefined);

      // 29 places left: the batch's first 29 commands are applied, the 11 after them are not and say when to retry.
      const second = await push(ctx, alice, taskAdds(40, 30));
      const results = second.body.results as Result[];
      assert.deepEqual(statuses(results), [...Array(29).fill('ok'), ...Array(11).fill('rate_limited')]);
      const refused = results[29]!.error!;
      assert.equal(refused.status, 429);
      assert.match(String(refused.detail), /per-minute limit of this account \(60 requests\)/);
      assert.equal(results[39]!.object, undefined);
      assert.match(String(second.headers['retry-after']), /^\d+$/);
      assert.ok(Number(second.headers['retry-after']) <= 60);
      assert.equal(remaining(second.headers['ratelimit'], 'minute'), 0);
      assert.equal(remaining(second.headers['ratelimit'], 'day'), 10_000 - FREE_PER_MINUTE);
      assert.equal(await taskCount(ctx, alice), 59);

      // The minute is spent: a push is refused whole, as a single request is, and nothing more is applied.
      const spent = await push(ctx, alice, taskAdds(5, 70), 429);
      assert.equal(spent.body.code, 'rate_limited');
      assert.match(String(spent.headers['retry-after']), /^\d+$/);
      await ctx.api
        .post('/api/tasks')
        .set(alice.headers)
        .send({ title: 'One more', due_at: DUE, course: null })
        .expect(429);
      assert.equal(await taskCount(ctx, alice), 59);
    });

    it('charges a replayed command nothing: a batch sent again costs one request, the push', async () => {
      const ctx = await generalApp({ limitStores: stores });
      const bob = await ctx.newStudent();
      const batch = taskAdds(10);
      const first = await push(ctx, bob, batch);
      assert.equal(remaining(first.headers['ratelimit'], 'minute'), FREE_PER_MINUTE - 10);
      const again = await push(ctx, bob, batch);
      assert.deepEqual(again.body, first.body);
      assert.equal(remaining(again.headers['ratelimit'], 'minute'), FREE_PER_MINUTE - 11);
      // Half replayed, half new: only the new half is charged (the push pays for the first of them).
      const mixed = await push(ctx, bob, [...batch.slice(0, 5), ...taskAdds(5, 10)]);
      assert.deepEqual(statuses(mixed.body.results), Array(10).fill('ok'));
      assert.equal(remaining(mixed.headers['ratelimit'], 'minute'), FREE_PER_MINUTE - 16);
      assert.equal(await taskCount(ctx, bob), 15);
    });

    it('applies a batch sent twice at once once: the second answers the first results', async () => {
      const ctx = await generalApp({ limitStores: stores });
      const dave = await ctx.newStudent();
      const batch = [
        { uuid: randomUUID(), type: 'task_add', temp_id: 'essay', args: { title: 'Essay', due_at: DUE, course: null } },
        ...taskAdds(4),
        { uuid: randomUUID(), type: 'task_close', id: 'essay' },
      ];
      const [one, two] = await Promise.all([push(ctx, dave, batch), push(ctx, dave, batch)]);
      assert.deepEqual(statuses(one.body.results), Array(6).fill('ok'));
      assert.deepEqual(two.body, one.body);
      assert.equal(await taskCount(ctx, dave), 5);
      assert.equal(await taskStatus(ctx, one.body.temp_id_mapping.essay), 'completed');
    });

    it('a batch cut short by the limit is completed by sending it again once there is room', async () => {
      const ctx = await generalApp({ limitStores: stores });
      const carol = await ctx.newStudent();
      // A contract whose day is short, so that the day window is the one that runs out.
      await setPlan(
        ctx.db,
        carol.id,
        { plan: 'contract', contract_per_minute: 100, contract_per_day: 12, contract_ai_per_hour: 5 },
        new Date(),
      );
      const batch = [
        { uuid: randomUUID(), type: 'task_add', temp_id: 'essay', args: { title: 'Essay', due_at: DUE, course: null } },
        ...taskAdds(10),
        { uuid: randomUUID(), type: 'task_close', id: 'essay' },
        { uuid: randomUUID(), type: 'task_delete', id: 'essay' },
      ];
      const cut = await push(ctx, carol, batch);
      assert.deepEqual(statuses(cut.body.results), [...Array(12).fill('ok'), 'rate_limited']);
      assert.match(String(cut.body.results[12].error.detail), /per-day limit of this account \(12 requests\)/);
      assert.ok(Number(cut.headers['retry-after']) > 60, 'waits for the day, not the minute');
      assert.equal(remaining(cut.headers['ratelimit'], 'day'), 0);
      assert.equal(remaining(cut.headers['ratelimit'], 'minute'), 100 - 12);
      const essay = cut.body.temp_id_mapping.essay as string;
      // Read in the database: the day has no request left to read it with.
      assert.equal(await taskStatus(ctx, essay), 'completed');
      // The same batch again, with the day spent: refused whole, the task not deleted.
      await push(ctx, carol, batch, 429);
      assert.equal(await taskStatus(ctx, essay), 'completed');

      // Room again (a larger contract, seen once the plan change reached the kept principal): the same batch again
      // applies what was left, and its applied commands answer as they did.
      await setPlan(
        ctx.db,
        carol.id,
        { plan: 'contract', contract_per_minute: 100, contract_per_day: 100, contract_ai_per_hour: 5 },
        new Date(),
      );
      for (let seen = false; !seen;) {
        const res = await ctx.api.get('/api/users/me').set(carol.headers);
        seen = /"day"; q=100;/.test(String(res.headers['ratelimit-policy']));
        if (!seen) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const rest = await push(ctx, carol, batch);
      assert.deepEqual(statuses(rest.body.results), Array(13).fill('ok'));
      assert.deepEqual(rest.body.results.slice(0, 12), cut.body.results.slice(0, 12));
      assert.equal(rest.body.temp_id_mapping.essay, essay);
      assert.equal(await taskStatus(ctx, essay), undefined);
      assert.equal(await taskCount(ctx, carol), 10);
    });
  });
}
