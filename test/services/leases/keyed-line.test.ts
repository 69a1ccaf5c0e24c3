// Work in line per key (services/leases/keyed-line.ts): one task of a key at a time, a bounded line, other keys free.
import assert from 'node:assert/strict';
import { keyedLine } from '../../../services/leases/keyed-line.ts';

describe('keyedLine', () => {
  it("runs one task of a key at a time, refuses at once beyond its bound, and never makes another key's tasks wait", async () => {
    const line = keyedLine(3);
    let running = 0;
    let mostRunning = 0;
    const gates: Array<() => void> = [];
    const task = (result: string) => async () => {
      mostRunning = Math.max(mostRunning, ++running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running -= 1;
      return result;
    };
    const busy = Array.from({ length: 5 }, (_, i) => line.tryRun('busy', task(`busy ${i}`)));
    assert.deepEqual(
      busy.map((p) => p !== undefined),
      [true, true, true, false, false],
    );
    assert.equal(line.pending('busy'), 3);
    const other = line.tryRun('other', async () => 'other');
    assert.equal(await other, 'other', "another key's task ran while the busy key's first was still running");
    for (let done = 0; done < 3; done++) {
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      gates.shift()!();
    }
    assert.deepEqual(await Promise.all(busy.slice(0, 3).map((run) => run!)), ['busy 0', 'busy 1', 'busy 2']);
    assert.equal(mostRunning, 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(line.pending('busy'), 0);
  });

  it('goes on with the next task of a key when one fails', async () => {
    const line = keyedLine(2);
    const failing = line.tryRun('k', async () => Promise.reject(new Error('no')));
    const next = line.tryRun('k', async () => 'next');
    await assert.rejects(failing!, /no/);
    assert.equal(await next, 'next');
  });
});
