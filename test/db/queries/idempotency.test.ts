// db/queries/idempotency.ts on the run's engine: stored first responses are the student's own, one per key, and free
// again once expired; the key's try-lock refuses a second transaction without waiting and frees at its end.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import {
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  insertIdempotencyKey,
  tryLockIdempotencyKey,
  type StoredResponse,
} from '../../../db/queries/idempotency.ts';
import { testDatabase } from '../../support/shared-database.ts';
import { db, deleteNewStudents, newStudent } from '../../support/query-fixture.ts';

const NOW = new Date('2026-03-02T12:00:00Z');
const stored = (userId: string, key: string, expiresAt: Date): StoredResponse => ({
  user_id: userId,
  key,
  request_hash: `hash-of-${key}`,
  response_status: 201,
  response_body: { id: key, nested: { list: [1, 'two', null] } },
  created_at: NOW,
  expires_at: expiresAt,
});

describe('idempotency key queries', () => {
  after(deleteNewStudents);

  it("keeps each student's keys apart, one response per key, the body as stored", async () => {
    const student = await newStudent();
    const other = await newStudent();
    await insertIdempotencyKey(db(), stored(student, 'k', new Date(NOW.getTime() + 1000)));
    await insertIdempotencyKey(db(), stored(other, 'k', new Date(NOW.getTime() + 1000)));
    await assert.rejects(insertIdempotencyKey(db(), stored(student, 'k', new Date(NOW.getTime() + 1000))), {
      code: '23505',
    });
    assert.deepEqual(await findIdempotencyKey(db(), student, 'k'), {
      request_hash: 'hash-of-k',
      response_status: 201,
      response_body: { id: 'k', nested: { list: [1, 'two', null] } },
    });
    assert.equal(await findIdempotencyKey(db(), student, 'K'), undefined);
  });

  it("forgets a student's keys that expired by now (the instant itself included), and no one else's", async () => {
    const student = await newStudent();
    const other = await newStudent();
    await insertIdempotencyKey(db(), stored(student, 'expired', new Date(NOW.getTime() - 1)));
    await insertIdempotencyKey(db(), stored(student, 'expires-now', NOW));
    await insertIdempotencyKey(db(), stored(student, 'live', new Date(NOW.getTime() + 1)));
    await insertIdempotencyKey(db(), stored(other, 'expired', new Date(NOW.getTime() - 1)));
    await deleteExpiredIdempotencyKeys(db(), student, NOW);
    const left = async (userId: string, keys: string[]) =>
      (await Promise.all(keys.map((key) => findIdempotencyKey(db(), userId, key)))).map(Boolean);
    assert.deepEqual(await left(student, ['expired', 'expires-now', 'live']), [false, false, true]);
    assert.deepEqual(await left(other, ['expired']), [true]);
  });

  it('refuses the key to a second transaction while the first runs, at once, and frees it when the first ends', async function () {
    // PGlite has one session: a second transaction would queue behind the first instead of asking beside it.
    if (!testDatabase().url) this.skip();
    const lockId = BigInt(randomInt(2 ** 47));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let first!: () => void;
    const taken = new Promise<void>((resolve) => (first = resolve));
    const holder = db()
      .transaction()
      .execute(async (trx) => {
        assert.equal(await tryLockIdempotencyKey(trx, lockId), true);
        assert.equal(await tryLockIdempotencyKey(trx, lockId), true, 'the holder may ask again');
        first();
        await held;
      });
    await taken;
    assert.equal(
      await db()
        .transaction()
        .execute((trx) => tryLockIdempotencyKey(trx, lockId)),
      false,
    );
    release();
    await holder;
    assert.equal(
      await db()
        .transaction()
        .execute((trx) => tryLockIdempotencyKey(trx, lockId)),
      true,
    );
  });
});
