// What db move-to-postgres lists of data over a per-account bound (app/cli/over-bounds.ts): each bound's holder
// over it, counted as the bound's check counts, and nobody at the bound.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { insertCalendarFeed } from '../../../db/queries/calendar.ts';
import { addMember, insertRoom } from '../../../db/queries/rooms.ts';
import { overBoundLines } from '../../../app/cli/over-bounds.ts';
import {
  MAX_ENDPOINTS_PER_STUDENT,
  MAX_FEEDS_PER_STUDENT,
  MAX_OPEN_SERIES,
  MAX_ROOMS_JOINED,
  MAX_ROOMS_OWNED,
  MAX_ROOM_MEMBERS,
} from '../../../domain/bounds.ts';
import { db, deleteNewStudents, newEndpoint, newStudent, newTask } from '../../support/query-fixture.ts';

describe('accounts over a per-account bound, as db move-to-postgres lists them', () => {
  after(deleteNewStudents);

  it('lists every holder over each bound with its count, and none at the bound', async function () {
    this.timeout(120_000);
    const [over, at] = [await newStudent(), await newStudent()];
    const now = new Date();
    const rooms: string[] = [];
    const room = (owner: string, i: number) => insertRoom(db(), { name: `${i}`, course: null, created_by: owner }, now);
    for (let i = 0; i <= MAX_ROOMS_JOINED; i++) rooms.push((await room(over, i)).id);
    for (let i = 0; i < MAX_ROOMS_OWNED; i++) await room(at, i);
    for (let i = 0; i < MAX_ROOM_MEMBERS; i++) await addMember(db(), rooms[0]!, await newStudent(), now);
    for (const [student, feeds] of [
      [over, MAX_FEEDS_PER_STUDENT + 1],
      [at, MAX_FEEDS_PER_STUDENT],
    ] as const) {
      for (let i = 0; i < feeds; i++) {
        const feed = { name: `f${i}`, prefix: 'scf_x', token_hash: randomUUID(), grant_id: null };
        await insertCalendarFeed(db(), { ...feed, user_id: student, scopes: [], include_notes: false });
      }
    }
    for (let i = 0; i <= MAX_ENDPOINTS_PER_STUDENT; i++) await newEndpoint({ user_id: over }, ['task.created']);
    const weekly = { recurrence: 'FREQ=WEEKLY;BYDAY=MO' };
    for (let i = 0; i <= MAX_OPEN_SERIES; i++) await newTask(over, new Date('2031-03-03T09:00:00Z'), weekly);

    const lines = await overBoundLines(db());
    const about = (id: string) => lines.filter((line) => line.includes(id)).map((line) => line.trim());
    assert.deepEqual(about(over).sort(), [
      `calendar feeds (bound ${MAX_FEEDS_PER_STUDENT}): ${over} holds ${MAX_FEEDS_PER_STUDENT + 1}`,
      `open recurring series (bound ${MAX_OPEN_SERIES}): ${over} holds ${MAX_OPEN_SERIES + 1}`,
      `study rooms joined (bound ${MAX_ROOMS_JOINED}): ${over} holds ${MAX_ROOMS_JOINED + 1}`,
      `study rooms owned (bound ${MAX_ROOMS_OWNED}): ${over} holds ${MAX_ROOMS_JOINED + 1}`,
      `webhook endpoints (bound ${MAX_ENDPOINTS_PER_STUDENT}): ${over} holds ${MAX_ENDPOINTS_PER_STUDENT + 1}`,
    ]);
    const full = `members of a study room (bound ${MAX_ROOM_MEMBERS}): ${rooms[0]} holds ${MAX_ROOM_MEMBERS + 1}`;
    assert.deepEqual(about(rooms[0]!), [full]);
    assert.deepEqual(about(at), [], 'at a bound is not over it');
  });
});
