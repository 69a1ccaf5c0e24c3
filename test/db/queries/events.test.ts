// db/queries/events.ts on the run's engine: an outbox row that no webhook endpoint can receive is stored fanned out
// already and wakes no relay; a row that some endpoint may receive waits for the fan-out, as every row did before.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import { eventRows, insertEvent, insertEvents } from '../../../db/queries/events.ts';
import { revokeGrant } from '../../../db/queries/oauth.ts';
import {
  db,
  deleteNewStudents,
  newAppGrant,
  newEndpoint,
  newStudent,
  rolledBack,
} from '../../support/query-fixture.ts';

const AT = new Date('2026-03-02T12:00:00Z');
const AT_ISO = AT.toISOString();

/** Stores a task.created of the student's, alone and in a batch of two; each row's fanned_out_at (ISO). */
async function stored(userId: string): Promise<Array<string | null>> {
  const event = { type: 'task.created', user_id: userId, data: {}, created_at: AT, fanned_out_at: null };
  return rolledBack(db(), async (trx) => {
    const single = await insertEvent(trx, event);
    await insertEvents(trx, eventRows([event, event])).execute();
    const rows = await trx
      .selectFrom('events')
      .select(['id', 'fanned_out_at'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    assert.equal(rows.length, 3);
    assert.ok(rows.some((row) => row.id === single));
    return rows.map((row) => row.fanned_out_at?.toISOString() ?? null);
  });
}

describe('outbox rows', () => {
  after(deleteNewStudents);

  it('are stored fanned out, at their own instant, when their student has no enabled endpoint of their kind and no app with one', async () => {
    const student = await newStudent();
    await newEndpoint({ user_id: student }, ['task.created'], { enabled: false });
    const ungranted = await newAppGrant(await newStudent(), ['tasks:read']);
    await newEndpoint({ client_id: ungranted.clientId }, ['task.created']); // another student's app
    assert.deepEqual(await stored(student), [AT_ISO, AT_ISO, AT_ISO]);
  });

  it("wait for the fan-out when the student's own endpoint, or an app's through a live grant, may receive them", async () => {
    const own = await newStudent();
    await newEndpoint({ user_id: own }, ['exam.created']); // another kind only
    assert.deepEqual(await stored(own), [AT_ISO, AT_ISO, AT_ISO], 'an endpoint of other kinds receives none');
    await newEndpoint({ user_id: own }, ['exam.created', 'task.created']);
    assert.deepEqual(await stored(own), [null, null, null]);

    const granting = await newStudent();
    // Without the read scope (tasks:read) the fan-out sends the app nothing; that is the fan-out's to decide.
    const app = await newAppGrant(granting, ['profile:read']);
    await newEndpoint({ client_id: app.clientId }, ['task.created']);
    assert.deepEqual(await stored(granting), [null, null, null]);
    await revokeGrant(db(), app.grantId, 'test', AT);
    assert.deepEqual(await stored(granting), [AT_ISO, AT_ISO, AT_ISO], 'a revoked grant sends nothing');
  });

  it('keep the fanned_out_at they are given (an event sent directly to one endpoint)', async () => {
    const own = await newStudent();
    await newEndpoint({ user_id: own }, ['task.created']);
    const direct = new Date('2026-03-02T12:00:05Z');
    const [row] = await rolledBack(db(), async (trx) => {
      const id = await insertEvent(trx, {
        type: 'task.created',
        user_id: own,
        data: {},
        created_at: AT,
        fanned_out_at: direct,
      });
      return trx.selectFrom('events').select('fanned_out_at').where('id', '=', id).execute();
    });
    assert.equal(row!.fanned_out_at?.toISOString(), direct.toISOString());
  });

  it('call the trigger that wakes the relays only for rows that wait for the fan-out', async () => {
    const quiet = await newStudent();
    const heard = await newStudent();
    await newEndpoint({ user_id: heard }, ['task.created']);
    // The PL/pgSQL calls of the transaction so far (track_functions counts them per transaction).
    const calls = (trx: Db) =>
      sql<{ calls: number }>`select coalesce(sum(calls), 0)::int as calls from pg_stat_xact_user_functions
        where funcname = 'notify_channel'`
        .execute(trx)
        .then((result) => result.rows[0]!.calls);
    const counted = await rolledBack(db(), async (trx) => {
      await sql`set local track_functions = 'pl'`.execute(trx);
      const event = (userId: string) => ({
        type: 'task.created',
        user_id: userId,
        data: {},
        created_at: AT,
        fanned_out_at: null,
      });
      await insertEvents(trx, eventRows([event(quiet), event(quiet)])).execute();
      const afterQuiet = await calls(trx);
      await insertEvent(trx, event(heard));
      return { afterQuiet, afterHeard: await calls(trx) };
    });
    assert.deepEqual(counted, { afterQuiet: 0, afterHeard: 1 });
  });
});
