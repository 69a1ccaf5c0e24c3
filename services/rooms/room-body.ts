// A study room and its timer as the API shows them, to the member reading (the owner alone sees the join code's
// prefix). The handlers' answers and the events about a room share these mappers, so they always agree.
import type { Db } from '../../db/connect.ts';
import { latestSessions, memberCounts, type RoomRow, type SessionRow } from '../../db/queries/rooms.ts';
import { focusState } from '../../domain/focus-timer.ts';
import type { components } from '../../generated/general/types.ts';

export type Room = components['schemas']['Room'];
export type RoomTimer = components['schemas']['RoomTimer'];
export type RoomMember = components['schemas']['RoomMember'];

/** A member's row as db/queries/rooms.ts listMembers reads it. */
interface MemberRow {
  nickname: string;
  first_name: string;
  is_owner: boolean;
  joined_at: Date;
}

/** Who a member is to the others: the presence moves, the stream's snapshot and the member list all name them so. */
export function memberName(member: Pick<MemberRow, 'nickname' | 'first_name'>) {
  return { nickname: member.nickname, first_name: member.first_name };
}

/** A member as the member list and the room.member_joined event show them. */
export function memberBody(member: MemberRow, present: boolean): RoomMember {
  const role = member.is_owner ? 'owner' : 'member';
  return { ...memberName(member), role, joined_at: member.joined_at.toISOString(), present };
}

export function timerBody(session: SessionRow, now: Date): RoomTimer {
  const state = focusState(session, now);
  return {
    session_id: session.id,
    room_id: session.room_id,
    status: state.status,
    duration_minutes: Math.round(session.duration_ms / 60_000),
    started_at: session.started_at.toISOString(),
    paused_at: state.status === 'paused' ? session.paused_at!.toISOString() : null,
    ends_at: state.ends_at?.toISOString() ?? null,
    remaining_seconds: Math.ceil(state.remaining_ms / 1000),
  };
}

/** The rooms as `viewerId` (a member of each) sees them, in the order given, with their timers as of `now`. */
export async function roomBodies(db: Db, viewerId: string, rows: readonly RoomRow[], now: Date): Promise<Room[]> {
  const ids = rows.map((row) => row.id);
  // One after the other: `db` may be a transaction, whose one connection runs one statement at a time.
  const counts = await memberCounts(db, ids);
  const sessions = await latestSessions(db, ids);
  return rows.map((row) => {
    const owner = row.created_by === viewerId;
    const session = sessions.get(row.id);
    return {
      id: row.id,
      title: row.name,
      course: row.course,
      visibility: row.visibility,
      role: owner ? 'owner' : 'member',
      member_count: counts.get(row.id) ?? 1,
      join_code:
        owner && row.join_code_prefix && row.join_code_created_at
          ? { prefix: row.join_code_prefix, created_at: row.join_code_created_at.toISOString() }
          : null,
      timer: session ? timerBody(session, now) : null,
      created_at: row.created_at.toISOString(),
    };
  });
}

export async function roomBody(db: Db, viewerId: string, row: RoomRow, now: Date): Promise<Room> {
  return (await roomBodies(db, viewerId, [row], now))[0]!;
}
