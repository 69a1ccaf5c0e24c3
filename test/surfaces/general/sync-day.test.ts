// A phone's day through the sync: it loads the state with `*`, goes offline, makes 20 edits (a task made and closed by
// its temp_id among them), comes back, pushes once and pulls once: its store equals the server's lists field by
// field; the push sent again applies nothing twice; and a second device that pulls sees every change.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generalApp } from '../../support/general-app.ts';
import { pullUntilEqual, serverState, Store } from '../../support/sync-store.ts';

const DUE = '2026-12-08T09:00:00Z';

describe('a phone’s day offline, through pullSync and pushSyncCommands', () => {
  it('ends with the phone, the server and another device in the same state, whatever is pushed twice', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const existing = [];
    for (const title of ['Reading', 'Problem set', 'Lab']) {
      const body = { title, due_at: DUE, course: 'Physics' };
      existing.push((await ctx.api.post('/api/tasks').set(alice.headers).send(body).expect(201)).body.id as string);
    }
    const [phone, laptop] = [new Store(), new Store()];
    await phone.pull(ctx, alice);
    await laptop.pull(ctx, alice);
    assert.equal(phone.objects.tasks.size, 3);

    const edits: object[] = [
      { type: 'task_add', temp_id: 'essay', args: { title: 'Essay', due_at: DUE, course: 'History' } },
      { type: 'task_update', id: 'essay', args: { notes: 'outline first' } },
      { type: 'task_update', id: existing[0], args: { priority: 'high' } },
      { type: 'task_close', id: existing[1] },
      { type: 'task_delete', id: existing[2] },
    ];
    for (let i = 0; i < 12; i++)
      edits.push({
        type: 'task_add',
        temp_id: `t${i}`,
        args: { title: `Flashcard set ${i}`, due_at: DUE, course: null },
      });
    edits.push(
      { type: 'task_update', id: 't3', args: { title: 'Flashcard set 3, revised' } },
      { type: 'task_delete', id: 't7' },
      { type: 'task_close', id: 'essay' },
    );
    const batch = edits.map((edit) => ({ uuid: randomUUID(), ...edit }));
    assert.equal(batch.length, 20);

    const push = () => ctx.api.post('/api/sync/commands').set(alice.headers).send({ commands: batch }).expect(200);
    const pushed = (await push()).body;
    assert.ok(pushed.results.every((result: { status: string }) => result.status === 'ok'));
    const server = await serverState(ctx, alice);
    assert.equal(server.tasks.length, 2 + 1 + 11);
    assert.equal(server.tasks.find((task) => task.id === pushed.temp_id_mapping.essay)!.status, 'completed');

    await pullUntilEqual(ctx, alice, phone);
    // The answer to the push was lost: the phone sends it again, and nothing is applied twice.
    assert.deepEqual((await push()).body, pushed);
    assert.deepEqual(await serverState(ctx, alice), server);
    await pullUntilEqual(ctx, alice, phone);
    await pullUntilEqual(ctx, alice, laptop);
    assert.deepEqual(laptop.state(), phone.state());
  });
});
