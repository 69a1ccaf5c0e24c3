import assert from 'node:assert/strict';
import { createAiQueue, type Admission, type AiQueue, type Slot, type Waiting } from '../../services/ai/queue.ts';
import { loadConfig } from '../../app/config.ts';

function queued(admission: Admission): Waiting {
  assert.equal(admission.kind, 'queued');
  return admission.waiting;
}

function started(admission: Admission): Slot {
  assert.equal(admission.kind, 'started');
  return admission.slot;
}

/** Admits a named request and records when it starts, so a test can read the order of starts. */
function enter(queue: AiQueue, name: string, first: boolean, starts: string[], signal = new AbortController().signal) {
  const waiting = queued(queue.admit(first, signal));
  const moves: number[] = [];
  waiting.onMove((position) => moves.push(position));
  const slot = waiting.granted.then((s) => (starts.push(name), s));
  return { waiting, moves, slot };
}

describe('createAiQueue', () => {
  it('starts at once while a slot is free, and queues when every slot is busy', () => {
    const queue = createAiQueue({ maxConcurrency: 2, maxQueue: 4 });
    const never = new AbortController().signal;
    started(queue.admit(false, never));
    started(queue.admit(false, never));
    assert.equal(queued(queue.admit(false, never)).position, 1);
    assert.deepEqual([queue.running, queue.waiting], [2, 1]);
  });

  it('serves contract accounts first, first come first served within each class, and says who moved', async () => {
    const queue = createAiQueue({ maxConcurrency: 1, maxQueue: 8 });
    const holder = started(queue.admit(false, new AbortController().signal));
    const starts: string[] = [];
    const free1 = enter(queue, 'free1', false, starts);
    const free2 = enter(queue, 'free2', false, starts);
    const contract1 = enter(queue, 'contract1', true, starts);
    const contract2 = enter(queue, 'contract2', true, starts);
    assert.deepEqual(
      [contract1, contract2, free1, free2].map((r) => r.waiting.position),
      [1, 2, 3, 4],
    );
    assert.deepEqual(free1.moves, [2, 3], 'pushed back by each contract request');
    assert.deepEqual(free2.moves, [3, 4]);

    holder.release();
    holder.release(); // a second release frees nothing more
    (await contract1.slot).release();
    (await contract2.slot).release();
    (await free1.slot).release();
    await free2.slot;
    assert.deepEqual(starts, ['contract1', 'contract2', 'free1', 'free2']);
    assert.deepEqual(free2.moves, [3, 4, 3, 2, 1]);
    assert.deepEqual([queue.running, queue.waiting], [1, 0]);
  });

  it('is full at maxQueue waiting requests, and 0 refuses whenever every slot is busy', () => {
    const never = new AbortController().signal;
    const queue = createAiQueue({ maxConcurrency: 1, maxQueue: 2 });
    started(queue.admit(false, never));
    queued(queue.admit(false, never));
    queued(queue.admit(true, never));
    assert.equal(queue.admit(true, never).kind, 'full', 'contract accounts too: the bound holds for everyone');
    const none = createAiQueue({ maxConcurrency: 1, maxQueue: 0 });
    started(none.admit(false, never));
    assert.equal(none.admit(true, never).kind, 'full');
  });

  it('takes a request out of the queue when its signal aborts, moving those behind it up', async () => {
    const queue = createAiQueue({ maxConcurrency: 1, maxQueue: 2 });
    const holder = started(queue.admit(false, new AbortController().signal));
    const starts: string[] = [];
    const leaving = new AbortController();
    const a = enter(queue, 'a', false, starts, leaving.signal);
    const b = enter(queue, 'b', false, starts);
    leaving.abort(new Error('client gone'));
    await assert.rejects(a.slot, /client gone/);
    assert.deepEqual([b.waiting.position, queue.waiting], [1, 1]);
    queued(queue.admit(false, new AbortController().signal)); // the place is free again
    holder.release();
    await b.slot;
    assert.deepEqual(starts, ['b']);
  });

  it('never queues a request whose signal has already aborted', async () => {
    const queue = createAiQueue({ maxConcurrency: 1, maxQueue: 1 });
    started(queue.admit(false, new AbortController().signal));
    const waiting = queued(queue.admit(false, AbortSignal.abort()));
    await assert.rejects(waiting.granted);
    assert.equal(queue.waiting, 0);
  });

  it('takes its limits from AI_MAX_CONCURRENCY (4, at least 1) and AI_MAX_QUEUE (16, 0 allowed)', () => {
    assert.deepEqual(loadConfig({}).aiQueue, { maxConcurrency: 4, maxQueue: 16 });
    assert.deepEqual(loadConfig({ AI_MAX_CONCURRENCY: '1', AI_MAX_QUEUE: '0' }).aiQueue, {
      maxConcurrency: 1,
      maxQueue: 0,
    });
    assert.throws(
      () => loadConfig({ AI_MAX_CONCURRENCY: '0' }),
      /AI_MAX_CONCURRENCY must be an integer from 1 to 1000, got "0"/,
    );
    assert.throws(
      () => loadConfig({ AI_MAX_QUEUE: '-1' }),
      /AI_MAX_QUEUE must be an integer from 0 to 10000, got "-1"/,
    );
  });
});
