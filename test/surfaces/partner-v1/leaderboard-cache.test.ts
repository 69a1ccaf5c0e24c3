// The partner leaderboards are kept in each process (db/queries/leaderboards.ts) until a change to the students is
// notified (triggers on users, db/migrations/20261126_0001_leaderboard_changes.ts) or the clock moves them: a name
// leaving the activity window, a streak lapsing at the student's local midnight.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../../../db/connect.ts';
import {
  keepLeaderboardsInMemory,
  LEADERBOARDS_CHANNEL,
  readLeaderboard,
  topUsersByXp,
} from '../../../db/queries/leaderboards.ts';
import { changeNotified, nextNotification, notifies } from '../../support/next-notification.ts';
import { partnerApp, testNotifications } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

const DAY_MS = 24 * 3600 * 1000;
const SHOWN = ['id', 'nickname', 'xp', 'streak', 'last_study_date', 'last_active_at', 'time_zone'] as const;

describe('leaderboards kept in memory', () => {
  const topStudent = (db: Db) =>
    db.selectFrom('users').select(SHOWN).orderBy('xp', 'desc').orderBy('id').executeTakeFirstOrThrow();

  /** Runs `change` and waits until its notification has dropped the kept boards. */
  const changed = (change: () => Promise<unknown>) => changeNotified(LEADERBOARDS_CHANNEL, change);

  let restore: (() => Promise<unknown>) | undefined;
  afterEach(async () => {
    await restore?.();
    restore = undefined;
  });

  function putBack(db: Db, student: Awaited<ReturnType<typeof topStudent>>) {
    const { id, ...shown } = student;
    restore = () => changed(() => db.updateTable('users').set(shown).where('id', '=', id).execute());
  }

  it('serves a board from memory until a committed change to the students is notified', async () => {
    const { api, key, db } = await partnerApp();
    await nextNotification(LEADERBOARDS_CHANNEL, 'missed');
    const path = '/api/v1/leaderboards/global?limit=3';
    const before = await api.get(path).set('X-Service-API-Key', key).expect(200);
    const top = await topStudent(db);
    putBack(db, top);

    // Written with the triggers off: nobody is told, and the board kept in memory still answers, as the same bytes.
    await db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await trx
        .updateTable('users')
        .set({ xp: top.xp + 1 })
        .where('id', '=', top.id)
        .execute();
    });
    const kept = await api.get(path).set('X-Service-API-Key', key).expect(200);
    assert.deepEqual(kept.body, before.body);
    assert.equal(kept.headers.etag, before.headers.etag);

    await changed(() =>
      db
        .updateTable('users')
        .set({ xp: top.xp + 2 })
        .where('id', '=', top.id)
        .execute(),
    );
    const after = await api
      .get(path)
      .set('X-Service-API-Key', key)
      .set('If-None-Match', before.headers.etag as string)
      .expect(200);
    assert.equal(after.body[0].xp, top.xp + 2);
    assert.notEqual(after.headers.etag, before.headers.etag);
  });

  it('is told nothing of an update that leaves every shown column as it was', async () => {
    const { db } = testDatabase();
    const top = await topStudent(db);
    putBack(db, top);
    const setXp = (xp: number) => () =>
      db
        .updateTable('users')
        .set({ xp, nickname: top.nickname, updated_at: new Date() })
        .where('id', '=', top.id)
        .execute();
    assert.equal(await notifies(db, LEADERBOARDS_CHANNEL, setXp(top.xp)), false, 'the same xp and nickname');
    assert.equal(await notifies(db, LEADERBOARDS_CHANNEL, setXp(top.xp + 1)), true, 'another xp');
  });

  it('reads a board again once the activity window would hide a name it shows, or show one it hides', async () => {
    const { db } = testDatabase();
    keepLeaderboardsInMemory(db, testNotifications());
    await nextNotification(LEADERBOARDS_CHANNEL, 'missed');
    const top = await topStudent(db);
    putBack(db, top);
    const lastActive = new Date(Date.UTC(2026, 10, 20, 12));
    await changed(() => db.updateTable('users').set({ last_active_at: lastActive }).where('id', '=', top.id).execute());
    const board = (activeSince: number) => topUsersByXp(db, { activeSince: new Date(activeSince), limit: 1 });

    const named = await board(lastActive.getTime() - DAY_MS);
    assert.equal(named[0]!.nickname, top.nickname);
    assert.equal(
      await board(lastActive.getTime() - DAY_MS / 2),
      named,
      'a later window that still names the student: the kept board',
    );
    assert.equal(
      await board(lastActive.getTime()),
      named,
      'a window starting at the last activity still names the student',
    );

    const hidden = await board(lastActive.getTime() + 1);
    assert.equal(hidden[0]!.nickname, null, 'a window starting after the last activity hides the name');
    const earlier = await board(lastActive.getTime() - DAY_MS);
    assert.equal(earlier[0]!.nickname, top.nickname, 'an earlier window names the student again');
  });

  it('keeps a board with a streak until that streak lapses at the student’s local midnight', async () => {
    const { db } = testDatabase();
    const top = await topStudent(db);
    putBack(db, top);
    const zone = 'Pacific/Kiritimati'; // UTC+14: its dates are ahead of the server's
    const yesterday = DateTime.now().setZone(zone).minus({ days: 1 }).toISODate()!;
    await changed(() =>
      db
        .updateTable('users')
        .set({ streak: 4, last_study_date: yesterday, time_zone: zone })
        .where('id', '=', top.id)
        .execute(),
    );
    const board = await readLeaderboard(db, { activeSince: new Date(0), limit: 1 });
    assert.equal(board.entries[0]!.streak, 4);
    assert.equal(
      board.streaksUntil,
      DateTime.fromISO(yesterday, { zone }).plus({ days: 2 }).toMillis(),
      'the start of the day after today, there',
    );

    await changed(() => db.updateTable('users').set({ streak: 0 }).where('id', '=', top.id).execute());
    assert.equal(
      (await readLeaderboard(db, { activeSince: new Date(0), limit: 1 })).streaksUntil,
      Infinity,
      'no streak shown, none to lapse',
    );
  });
});
