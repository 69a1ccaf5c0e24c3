// A readiness move reaches the streams of another process by its notification: the group (one process's streams of a
// student) has read what there was when its stream joined, and reads again by itself only every 30 s, so a move
// committed afterwards through another connection (on PostgreSQL another pool, as another process would) can only
// arrive within the bound by the notification. The bound is generous (it proves the mechanism; the bench measures the
// speed): a third of that read's period, which a machine doing several times its work still keeps within. A move whose
// notification was lost (its writer died between the commit and the send) arrives by that read.
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { connect, type Db } from '../../../db/connect.ts';
import { NOTIFY_AFTER_COMMIT_OPTIONS } from '../../../db/notifications-after-commit.ts';
import { notificationsFor, notifyOnCommit, type Notifications } from '../../../db/notifications.ts';
import type { Database } from '../../../db/schema.ts';
import { READINESS_CATCH_UP_MS, readinessGroups } from '../../../services/readiness/readiness-groups.ts';
import { READINESS_CHANNEL, readinessMoved, type ReadinessMove } from '../../../services/readiness/readiness.ts';
import { createFreshDatabase, type TestDatabase } from '../../support/test-db.ts';
import { insertStudent } from '../webhooks/fixtures.ts';

const WITHIN_MS = READINESS_CATCH_UP_MS / 3;

describe('readiness groups across processes', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let writer: Db;
  let notifications: Notifications;

  before(async function () {
    this.timeout(180_000);
    database = await createFreshDatabase();
    writer = database.url ? connect({ databaseUrl: database.url }) : database.db;
    notifications = notificationsFor(database.db, database.url, {
      logger: pino({ level: 'silent' }),
      timeoutMs: 5_000,
    });
  });
  after(async () => {
    await notifications.close();
    if (writer !== database.db) await writer.destroy();
    await database.close();
  });

  it("hands a move committed through another connection to a stream that joined before it, and nothing of another student's", async () => {
    const student = { user_id: await insertStudent(writer), time_zone: 'UTC' };
    const other = { user_id: await insertStudent(writer), time_zone: 'UTC' };
    const examDate = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    const [exam] = await Promise.all(
      [student, other].map((s) =>
        writer
          .insertInto('exams')
          .values({ user_id: s.user_id, subject: 'Chemistry', exam_date: examDate })
          .returning('id')
          .executeTakeFirstOrThrow(),
      ),
    );
    const groups = readinessGroups(database.db, notifications);
    const delivered: ReadinessMove[][] = [];
    let arrived: () => void = () => {};
    const leave = groups.join(student.user_id, {
      version: 0,
      deliver: (moves) => (delivered.push(moves), arrived()),
      fail: (error) => assert.fail(String(error)),
    });
    try {
      // The join's own read has found nothing (no move yet); the listener is in place.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(delivered.length, 0);

      const came = new Promise<void>((resolve) => (arrived = resolve));
      const committedAt = Date.now();
      await writer.transaction().execute((trx) => readinessMoved(trx, other, new Date()));
      await writer.transaction().execute((trx) => readinessMoved(trx, student, new Date()));
      await Promise.race([
        came,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`no move within ${WITHIN_MS} ms`)), WITHIN_MS)),
      ]);
      assert.ok(Date.now() - committedAt < WITHIN_MS);
      assert.deepEqual(
        delivered.flat().flatMap((move) => move.exams.map((state) => state.exam_id)),
        [exam!.id],
        "the student's exam, once, and nothing of the other student's",
      );
    } finally {
      leave();
    }
  });

  it('hands a move whose notification was lost to the stream all the same, by its next catch-up read', async function () {
    if (!database.url) this.skip(); // the embedded database's commits notify: nothing to lose
    // A writer that leaves its notifications to a sender that never sends (a process that died after its commit).
    const lostWriter = new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: database.url, options: NOTIFY_AFTER_COMMIT_OPTIONS }),
      }),
    });
    const announced: string[] = [];
    notifications.subscribe(READINESS_CHANNEL, { message: (payload) => announced.push(payload), missed: () => {} });
    const student = { user_id: await insertStudent(writer), time_zone: 'UTC' };
    const examDate = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    await writer
      .insertInto('exams')
      .values({ user_id: student.user_id, subject: 'Biology', exam_date: examDate })
      .execute();
    const groups = readinessGroups(database.db, notifications, { catchUpEveryMs: 300 });
    let arrived: () => void = () => {};
    const came = new Promise<void>((resolve) => (arrived = resolve));
    const leave = groups.join(student.user_id, {
      version: 0,
      deliver: () => arrived(),
      fail: (error) => assert.fail(String(error)),
    });
    try {
      await lostWriter.transaction().execute((trx) => readinessMoved(trx, student, new Date()));
      await Promise.race([
        came,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`no move within ${WITHIN_MS} ms`)), WITHIN_MS)),
      ]);
      // It came by the read: the move's notification was never sent (a marker committed after it arrives first).
      await database.db.transaction().execute((trx) => notifyOnCommit(trx, READINESS_CHANNEL, 'marker'));
      while (announced.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(announced[0], 'marker');
    } finally {
      leave();
      await lostWriter.destroy();
    }
  });
});
