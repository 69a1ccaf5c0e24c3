// The Idempotency-Key behaviour every creating operation shares (server/http/idempotency.ts), checked per
// operation: a retry replays the first response and creates nothing, another body with the same key is 422, and a
// key held by a request still running elsewhere is 409 (PostgreSQL; PGlite's single connection serialises the two,
// so there the second one replays).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tryLockIdempotencyKey } from '../../db/queries/idempotency.ts';
import { idempotencyLockId } from '../../server/http/idempotency.ts';
import type { Student } from './general-app.ts';
import { generalApp } from './general-app.ts';
import { testDatabase } from './shared-database.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

export interface IdempotentCreate {
  /** Makes what the operation needs (a deck for its cards, say) and returns the path to POST to. */
  prepare: (api: Api, student: Student) => Promise<string>;
  body: Record<string, unknown>;
  otherBody: Record<string, unknown>;
  /** How many things the operation created so far for the student. */
  count: (api: Api, student: Student, path: string) => Promise<number>;
  /** The app to call; the default general app unless the operation needs other settings. */
  app?: () => ReturnType<typeof generalApp>;
}

export function describeIdempotentCreate(operation: IdempotentCreate): void {
  describe('with an Idempotency-Key', () => {
    it('replays the first response for a retry and creates nothing more', async () => {
      const { api, newStudent } = await (operation.app ?? generalApp)();
      const alice = await newStudent();
      const path = await operation.prepare(api, alice);
      const key = randomUUID();
      const first = await api
        .post(path)
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(operation.body)
        .expect(201);
      const retry = await api
        .post(path)
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(operation.body)
        .expect(201);
      assert.deepEqual(retry.body, first.body);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.equal(await operation.count(api, alice, path), 1);
    });

    it('answers 422 idempotency_key_reused for the same key with another body', async () => {
      const { api, newStudent } = await (operation.app ?? generalApp)();
      const alice = await newStudent();
      const path = await operation.prepare(api, alice);
      const key = randomUUID();
      await api.post(path).set(alice.headers).set('Idempotency-Key', key).send(operation.body).expect(201);
      const res = await api
        .post(path)
        .set(alice.headers)
        .set('Idempotency-Key', key)
        .send(operation.otherBody)
        .expect(422);
      assert.equal(res.body.code, 'idempotency_key_reused');
      assert.equal(await operation.count(api, alice, path), 1);
    });

    it('answers 409 while the key is held by a request still running (PostgreSQL), else replays', async () => {
      const { api, newStudent } = await (operation.app ?? generalApp)();
      const alice = await newStudent();
      const path = await operation.prepare(api, alice);
      const key = randomUUID();
      const send = () => api.post(path).set(alice.headers).set('Idempotency-Key', key).send(operation.body);
      if (testDatabase().description.startsWith('PostgreSQL')) {
        await whileKeyHeld(alice.id, key, async () => assert.equal((await send().expect(409)).body.code, 'conflict'));
        await send().expect(201);
      } else {
        const [a, b] = await Promise.all([send().expect(201), send().expect(201)]);
        assert.deepEqual(a.body, b.body);
      }
      assert.equal(await operation.count(api, alice, path), 1);
    });
  });
}

/**
 * Runs `work` while another transaction holds the student's Idempotency-Key, as a request still running elsewhere
 * does. PostgreSQL only: PGlite's single connection would serialise `work` behind the holder.
 */
export async function whileKeyHeld(studentId: string, key: string, work: () => Promise<void>): Promise<void> {
  await testDatabase()
    .db.transaction()
    .execute(async (trx) => {
      assert.equal(await tryLockIdempotencyKey(trx, idempotencyLockId(studentId, key)), true);
      await work();
    });
}
