// db/queries/readiness.ts on the run's engine: a version counter per student that concurrent moves take in turn,
// and the per-exam memory a resumed stream is answered from (each exam once, in its latest state; tombstones hidden
// from the current state but sent as moves).
import assert from 'node:assert/strict';
import {
  currentReadinessVersion,
  findReadinessComparison,
  nextReadinessVersion,
  readinessMovedSince,
  recordReadiness,
} from '../../../db/queries/readiness.ts';
import { db, deleteNewStudents, newExam, newStudent } from '../../support/query-fixture.ts';

describe('readiness queries', () => {
  after(deleteNewStudents);

  it('counts versions per student from 1, one after the other however many moves run at once', async () => {
    const student = await newStudent();
    const other = await newStudent();
    assert.equal(await currentReadinessVersion(db(), student), 0);
    const versions = await Promise.all(
      Array.from({ length: 8 }, () =>
        db()
          .transaction()
          .execute((trx) => nextReadinessVersion(trx, student)),
      ),
    );
    assert.deepEqual(
      [...versions].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.equal(await currentReadinessVersion(db(), student), 8);
    assert.equal(await nextReadinessVersion(db(), other), 1);
  });

  it('answers what moved after a version, each exam once in its latest state, oldest move first', async () => {
    const student = await newStudent();
    const [a, b, c] = [
      await newExam(student, '2026-06-01'),
      await newExam(student, '2026-06-02'),
      await newExam(student, '2026-06-03'),
    ];
    const move = async (examId: string, state: unknown) => {
      const version = await nextReadinessVersion(db(), student);
      await recordReadiness(db(), { exam_id: examId, user_id: student, version, state, moved_at: new Date() });
      return version;
    };
    await move(a.id, { percent: 10 });
    const seen = await move(b.id, { percent: 20 });
    await move(a.id, { percent: 30 });
    await move(c.id, { percent: 40 });
    await move(b.id, null); // b left the stream

    const since = await readinessMovedSince(db(), student, seen);
    assert.deepEqual(
      since.map((row) => [row.exam_id, row.version, row.state]),
      [
        [a.id, 3, { percent: 30 }],
        [c.id, 4, { percent: 40 }],
        [b.id, 5, null],
      ],
    );
    assert.deepEqual((await readinessMovedSince(db(), student, 5)).length, 0);
    const pushedReadiness = async (userId: string) =>
      (await findReadinessComparison(db(), userId, '2000-01-01', { zone: 'UTC', since: new Date() }, 100)).pushed;
    const pushed = await pushedReadiness(student);
    assert.deepEqual(
      new Map(pushed.map((row) => [row.exam_id, row.state])),
      new Map<string, unknown>([
        [a.id, { percent: 30 }],
        [c.id, { percent: 40 }],
      ]),
    );
    assert.deepEqual(await pushedReadiness(await newStudent()), []);
  });
});
