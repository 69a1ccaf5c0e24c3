// The attempts' share of the pool (services/webhooks/pool-share.ts): at most its size at once, the rest in arrival
// order, and a place freed by a failed task as by a finished one.
import assert from 'node:assert/strict';
import { poolShare } from '../../../services/webhooks/pool-share.ts';

describe('poolShare', () => {
  it('runs at most its size of tasks at once, the others in arrival order, whether a task succeeds or fails', async () => {
    const share = poolShare(2);
    let running = 0;
    let mostRunning = 0;
    const started: number[] = [];
    const gates = new Map<number, (fail: boolean) => void>();
    const task = (i: number) => () => {
      started.push(i);
      mostRunning = Math.max(mostRunning, ++running);
      return new Promise<number>((resolve, reject) =>
        gates.set(i, (fail) => {
          running -= 1;
          if (fail) reject(new Error(`task ${i} failed`));
          else resolve(i);
        }),
      );
    };
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const results = [0, 1, 2, 3, 4].map((i) => share(task(i)).catch((error: Error) => error.message));
    await settle();
    assert.deepEqual(started, [0, 1], 'two at once');
    gates.get(1)!(true);
    await settle();
    assert.deepEqual(started, [0, 1, 2], "a failed task's place goes to the next in line");
    gates.get(0)!(false);
    await settle();
    assert.deepEqual(started, [0, 1, 2, 3]);
    for (const i of [2, 3]) gates.get(i)!(false);
    await settle();
    gates.get(4)!(false);
    assert.deepEqual(await Promise.all(results), [0, 'task 1 failed', 2, 3, 4]);
    assert.equal(mostRunning, 2);
    // Every place was given back: two run at once again.
    const again = [5, 6].map((i) => share(task(i)));
    await settle();
    assert.deepEqual(started.slice(-2), [5, 6]);
    for (const i of [5, 6]) gates.get(i)!(false);
    assert.deepEqual(await Promise.all(again), [5, 6]);
  });
});
