// db/queries/deliveries.ts on the run's engine: which endpoints an event goes to (the student's own, subscribed and
// enabled; an app's only through a live grant holding the read scope), one delivery per event and endpoint, an
// attempt's outcome recorded only while the delivery still waits for that attempt, and an endpoint given up on.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  appMayReceive,
  attemptStillDue,
  disableFailingEndpoint,
  fanOutEvents,
  finishDelivery,
  makeDeliveryDue,
  markEndpointFailing,
  upsertDelivery,
} from '../../../db/queries/deliveries.ts';
import { revokeGrant } from '../../../db/queries/oauth.ts';
import { findDelivery } from '../../../db/queries/webhooks.ts';
import { insertEvent } from '../../../db/queries/events.ts';
import {
  db,
  deleteNewStudents,
  newAppGrant,
  newEndpoint,
  newEvent,
  newStudent,
  rolledBack,
} from '../../support/query-fixture.ts';

const NOW = new Date('2026-03-02T12:00:00Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);

describe('delivery queries', () => {
  after(deleteNewStudents);

  it("fans events out to the student's subscribed enabled endpoints and to apps whose live grant holds the read scope, in their order, and marks them", async () => {
    const student = await newStudent();
    const both = await newEndpoint({ user_id: student }, ['task.created', 'exam.created']);
    const exams = await newEndpoint({ user_id: student }, ['exam.created']);
    await newEndpoint({ user_id: student }, ['task.created'], { enabled: false });
    const reader = await newAppGrant(student, ['tasks:read']);
    const readerEndpoint = await newEndpoint({ client_id: reader.clientId }, ['task.created', 'exam.created']);
    const unscoped = await newAppGrant(student, ['profile:read']);
    await newEndpoint({ client_id: unscoped.clientId }, ['task.created']);
    await newEndpoint({ user_id: await newStudent() }, ['task.created']);

    // Two new events, older than any other waiting, fanned out alone in a transaction rolled back afterwards.
    const fanOut = () =>
      rolledBack(db(), async (trx) => {
        const events = [
          await insertEvent(trx, {
            type: 'exam.created',
            user_id: student,
            data: {},
            created_at: new Date('2000-01-01T00:00:00Z'),
            fanned_out_at: null,
          }),
          await insertEvent(trx, {
            type: 'task.created',
            user_id: student,
            data: {},
            created_at: new Date('2000-01-01T00:00:01Z'),
            fanned_out_at: null,
          }),
        ];
        const result = await fanOutEvents(trx, {
          limit: 2,
          at: NOW,
          readScopes: { task: 'tasks:read', exam: 'exams:read' },
        });
        const waiting = await trx
          .selectFrom('events')
          .select('id')
          .where('id', 'in', events)
          .where('fanned_out_at', 'is', null)
          .execute();
        return {
          ...result,
          waiting: waiting.length,
          pairs: result.deliveries.map((d) => [events.indexOf(d.event_id), d.endpoint_id]),
        };
      });
    const first = await fanOut();
    assert.deepEqual([first.events, first.waiting], [2, 0], 'both events are handled and marked fanned out');
    assert.deepEqual(first.pairs, [
      ...[both, exams].sort().map((endpoint) => [0, endpoint]),
      ...[both, readerEndpoint].sort().map((endpoint) => [1, endpoint]),
    ]);
    assert.equal(await appMayReceive(db(), reader.clientId, student, 'tasks:read'), true);
    assert.equal(await appMayReceive(db(), reader.clientId, student, 'exams:read'), false);

    await revokeGrant(db(), reader.grantId, 'test', NOW);
    assert.equal(await appMayReceive(db(), reader.clientId, student, 'tasks:read'), false);
    assert.deepEqual(
      (await fanOut()).pairs.filter(([, endpoint]) => endpoint === readerEndpoint),
      [],
    );
    assert.deepEqual(await fanOutEvents(db(), { limit: 0, at: NOW, readScopes: {} }), { events: 0, deliveries: [] });
  });

  it('makes one delivery per event and endpoint, however often it is asked', async () => {
    const student = await newStudent();
    const endpoint = await newEndpoint({ user_id: student }, ['task.created']);
    const event = await newEvent(student, 'task.created');
    const first = await upsertDelivery(db(), { event_id: event, endpoint_id: endpoint, at: NOW });
    const again = await upsertDelivery(db(), { event_id: event, endpoint_id: endpoint, at: later(1000) });
    assert.deepEqual([first.created, again.created, again.id], [true, false, first.id]);
    assert.equal((await findDelivery(db(), endpoint, first.id))?.next_attempt_at?.toISOString(), NOW.toISOString());
  });

  it('records an attempt only while the delivery still waits for it: a re-send or another outcome meanwhile wins', async () => {
    const student = await newStudent();
    const endpoint = await newEndpoint({ user_id: student }, ['task.created']);
    const { id } = await upsertDelivery(db(), {
      event_id: await newEvent(student, 'task.created'),
      endpoint_id: endpoint,
      at: NOW,
    });
    const retry = { status: 'pending' as const, next_attempt_at: later(60_000), succeeded_at: null };

    assert.equal(await attemptStillDue(db(), id, NOW), true);
    assert.equal(await makeDeliveryDue(db(), id, later(5)), true); // re-sent by its owner
    assert.equal(await attemptStillDue(db(), id, NOW), false);
    assert.equal(await finishDelivery(db(), { id, due: NOW }, retry), false);
    assert.equal(await finishDelivery(db(), { id, due: later(5) }, retry), true);
    assert.equal(
      await finishDelivery(
        db(),
        { id, due: later(5) },
        { status: 'succeeded', next_attempt_at: null, succeeded_at: NOW },
      ),
      false,
    );
    assert.equal(
      await finishDelivery(
        db(),
        { id, due: later(60_000) },
        { status: 'succeeded', next_attempt_at: null, succeeded_at: NOW },
      ),
      true,
    );
    assert.equal(await finishDelivery(db(), { id, due: later(60_000) }, retry), false);
    assert.equal(await makeDeliveryDue(db(), randomUUID(), NOW), false);
  });

  it("keeps the start of an endpoint's run of failures, and giving up fails only its pending deliveries", async () => {
    const student = await newStudent();
    const [failing, healthy] = [
      await newEndpoint({ user_id: student }, ['task.created']),
      await newEndpoint({ user_id: student }, ['task.created']),
    ];
    assert.equal((await markEndpointFailing(db(), failing, NOW)).toISOString(), NOW.toISOString());
    assert.equal((await markEndpointFailing(db(), failing, later(3600_000))).toISOString(), NOW.toISOString());

    const deliver = async (endpoint: string) =>
      (
        await upsertDelivery(db(), {
          event_id: await newEvent(student, 'task.created'),
          endpoint_id: endpoint,
          at: NOW,
        })
      ).id;
    const [pending, done, elsewhere] = [await deliver(failing), await deliver(failing), await deliver(healthy)];
    await finishDelivery(
      db(),
      { id: done, due: NOW },
      { status: 'succeeded', next_attempt_at: null, succeeded_at: NOW },
    );
    await disableFailingEndpoint(db(), failing, later(1));

    const status = async (endpoint: string, id: string) => (await findDelivery(db(), endpoint, id))?.status;
    assert.deepEqual(
      [await status(failing, pending), await status(failing, done), await status(healthy, elsewhere)],
      ['failed', 'succeeded', 'pending'],
    );
    const endpoint = await db()
      .selectFrom('webhook_endpoints')
      .select(['enabled', 'disabled_reason'])
      .where('id', '=', failing)
      .executeTakeFirstOrThrow();
    assert.deepEqual(endpoint, { enabled: false, disabled_reason: 'failing' });
  });
});
