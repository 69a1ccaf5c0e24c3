// Study rooms, their members and their focus sessions (db/migrations/20261127_1101_study_rooms.ts). Every read is
// through a membership: a room the student is not in finds nothing, exactly as one that does not exist.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { notifyOnCommit } from '../notifications.ts';

const ROOM_COLUMNS = [
  'study_rooms.id',
  'study_rooms.name',
  'study_rooms.course',
  'study_rooms.visibility',
  'study_rooms.created_by',
  'study_rooms.created_at',
  'study_rooms.join_code_prefix',
  'study_rooms.join_code_created_at',
] as const;

const SESSION_COLUMNS = [
  'id',
  'room_id',
  'started_by',
  'duration_ms',
  'started_at',
  'paused_at',
  'paused_ms',
  'stopped_at',
  'finished_at',
] as const;

export async function insertRoom(
  trx: Db,
  room: { id?: string; name: string; course: string | null; created_by: string },
  at: Date,
) {
  const row = await trx
    .insertInto('study_rooms')
    .values({ ...room, created_at: at })
    .returning([
      'id',
      'name',
      'course',
      'visibility',
      'created_by',
      'created_at',
      'join_code_prefix',
      'join_code_created_at',
    ])
    .executeTakeFirstOrThrow();
  // The owner's membership is added by the table's trigger (study_rooms_owner_member), in this statement.
  return row;
}

/** The rooms `userId` is a member of, most recently joined first (ids break ties). */
export async function listMemberRooms(db: Db, userId: string) {
  return db
    .selectFrom('study_room_members')
    .innerJoin('study_rooms', 'study_rooms.id', 'study_room_members.room_id')
    .select(ROOM_COLUMNS)
    .where('study_room_members.user_id', '=', userId)
    .orderBy('study_room_members.joined_at', 'desc')
    .orderBy('study_rooms.id', 'desc')
    .execute();
}

/** A room `userId` is a member of; undefined for any other. */
export async function findMemberRoom(db: Db, userId: string, roomId: string) {
  return db
    .selectFrom('study_room_members')
    .innerJoin('study_rooms', 'study_rooms.id', 'study_room_members.room_id')
    .select(ROOM_COLUMNS)
    .where('study_room_members.user_id', '=', userId)
    .where('study_room_members.room_id', '=', roomId)
    .executeTakeFirst();
}

export type RoomRow = NonNullable<Awaited<ReturnType<typeof findMemberRoom>>>;

/**
 * Locks the room's row for the rest of the transaction (every write to a room and its members, codes and sessions
 * takes it first, then the students it credits, in id order) and returns it when `userId` is a member.
 */
export async function lockMemberRoom(trx: Db, userId: string, roomId: string): Promise<RoomRow | undefined> {
  if (!(await lockRoom(trx, roomId))) return undefined;
  return findMemberRoom(trx, userId, roomId);
}

/** Locks the room's row for the rest of the transaction; false when there is no such room. */
export async function lockRoom(trx: Db, roomId: string): Promise<boolean> {
  return (
    (await trx.selectFrom('study_rooms').select('id').where('id', '=', roomId).forUpdate().executeTakeFirst()) !==
    undefined
  );
}

export async function countOwnedRooms(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('study_rooms')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('created_by', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countJoinedRooms(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('study_room_members')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Members per room, for the rooms given. */
export async function memberCounts(db: Db, roomIds: readonly string[]): Promise<Map<string, number>> {
  if (roomIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('study_room_members')
    .select(['room_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('room_id', 'in', roomIds)
    .groupBy('room_id')
    .execute();
  return new Map(rows.map((r) => [r.room_id, Number(r.n)]));
}

/** The room's members with what the others may see of them: the owner first, then by joining. */
export async function listMembers(db: Db, roomId: string) {
  return db
    .selectFrom('study_room_members')
    .innerJoin('users', 'users.id', 'study_room_members.user_id')
    .innerJoin('study_rooms', 'study_rooms.id', 'study_room_members.room_id')
    .select([
      'users.id as user_id',
      'users.nickname',
      'users.first_name',
      'users.time_zone',
      'study_room_members.joined_at',
      sql<boolean>`study_rooms.created_by = users.id`.as('is_owner'),
    ])
    .where('study_room_members.room_id', '=', roomId)
    .orderBy(sql`study_rooms.created_by = users.id`, 'desc')
    .orderBy('study_room_members.joined_at')
    .orderBy('users.id')
    .execute();
}

export async function addMember(trx: Db, roomId: string, userId: string, at: Date): Promise<boolean> {
  const result = await trx
    .insertInto('study_room_members')
    .values({ room_id: roomId, user_id: userId, joined_at: at })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function removeMember(trx: Db, roomId: string, userId: string): Promise<void> {
  await trx.deleteFrom('study_room_members').where('room_id', '=', roomId).where('user_id', '=', userId).execute();
}

export async function deleteRoomRow(trx: Db, roomId: string): Promise<void> {
  await trx.deleteFrom('study_rooms').where('id', '=', roomId).execute();
}

/** The room's members other than `leaving`, in the order they joined (ids break ties): who may inherit it. */
export async function otherMembers(trx: Db, roomId: string, leaving: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('study_room_members')
    .select('user_id')
    .where('room_id', '=', roomId)
    .where('user_id', '<>', leaving)
    .orderBy('joined_at')
    .orderBy('user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

/** The ids of the rooms `userId` is a member of, in id order (the order an account's deletion locks them in). */
export async function memberRoomIds(trx: Db, userId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('study_room_members')
    .select('room_id')
    .where('user_id', '=', userId)
    .orderBy('room_id')
    .execute();
  return rows.map((r) => r.room_id);
}

/** Gives the room to `owner`; the join code goes, so the new owner decides who may join next. */
export async function transferRoom(trx: Db, roomId: string, owner: string): Promise<void> {
  await trx
    .updateTable('study_rooms')
    .set({ created_by: owner, join_code_prefix: null, join_code_hash: null, join_code_created_at: null })
    .where('id', '=', roomId)
    .execute();
}

export async function setJoinCode(
  trx: Db,
  roomId: string,
  code: { prefix: string; hash: string } | null,
  at: Date,
): Promise<void> {
  await trx
    .updateTable('study_rooms')
    .set({
      join_code_prefix: code?.prefix ?? null,
      join_code_hash: code?.hash ?? null,
      join_code_created_at: code ? at : null,
    })
    .where('id', '=', roomId)
    .execute();
}

/** The room whose current join code hashes to `hash`, locked; undefined for a rotated, revoked or unknown code. */
export async function lockRoomByCode(trx: Db, hash: string) {
  return trx
    .selectFrom('study_rooms')
    .select(['id', 'created_by'])
    .where('join_code_hash', '=', hash)
    .forUpdate()
    .executeTakeFirst();
}

export async function countMembers(db: Db, roomId: string): Promise<number> {
  return (await memberCounts(db, [roomId])).get(roomId) ?? 0;
}

/** The latest session of each room given (started last). */
export async function latestSessions(db: Db, roomIds: readonly string[]) {
  if (roomIds.length === 0) return new Map<string, SessionRow>();
  const rows = await db
    .selectFrom('study_room_sessions')
    .select(SESSION_COLUMNS)
    .distinctOn('room_id')
    .where('room_id', 'in', roomIds)
    .orderBy('room_id')
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return new Map(rows.map((r) => [r.room_id, r]));
}

export type SessionRow = {
  id: string;
  room_id: string;
  started_by: string | null;
  duration_ms: number;
  started_at: Date;
  paused_at: Date | null;
  paused_ms: number;
  stopped_at: Date | null;
  finished_at: Date | null;
};

export async function insertSession(
  trx: Db,
  session: { room_id: string; started_by: string; duration_ms: number; started_at: Date },
): Promise<SessionRow> {
  return trx.insertInto('study_room_sessions').values(session).returning(SESSION_COLUMNS).executeTakeFirstOrThrow();
}

export async function updateSession(
  trx: Db,
  id: string,
  change: { paused_at?: Date | null; paused_ms?: number; stopped_at?: Date | null; finished_at?: Date },
): Promise<SessionRow> {
  return trx
    .updateTable('study_room_sessions')
    .set(change)
    .where('id', '=', id)
    .returning(SESSION_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * The rooms whose running session's planned end is `now` or earlier and whose finish is not recorded, at most
 * `limit`, the longest due first: one range of study_room_sessions_running_end (the expression and the conditions
 * are the index's, so the planner uses it).
 */
export async function roomsWithDueSessions(db: Db, now: Date, limit: number): Promise<string[]> {
  const plannedEnd = sql`(started_at at time zone 'UTC') + (paused_ms + duration_ms) * interval '1 millisecond'`;
  const rows = await db
    .selectFrom('study_room_sessions')
    .select('room_id')
    .where('stopped_at', 'is', null)
    .where('finished_at', 'is', null)
    .where('paused_at', 'is', null)
    .where(plannedEnd, '<=', sql<Date>`(${now}::timestamptz at time zone 'UTC')`)
    .orderBy(plannedEnd)
    .limit(limit)
    .execute();
  return rows.map((r) => r.room_id);
}

/** A room stream announced its member present (the caller holds the room's lock and writes the `joined` move). */
export async function addPresence(
  trx: Db,
  presence: { stream_id: string; room_id: string; user_id: string },
  at: Date,
): Promise<void> {
  await trx
    .insertInto('study_room_presences')
    .values({ ...presence, opened_at: at })
    .execute();
}

/**
 * Ends a stream's presence (the caller holds the room's lock): the member it was of, for the one caller that ended
 * it (who writes the `left` move); undefined when it was ended already.
 */
export async function removePresence(trx: Db, streamId: string): Promise<string | undefined> {
  const row = await trx
    .deleteFrom('study_room_presences')
    .where('stream_id', '=', streamId)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** Ends every presence of `userId` in the room (the caller holds its lock): one row per stream that announced them. */
export async function removePresencesOf(trx: Db, roomId: string, userId: string): Promise<number> {
  const rows = await trx
    .deleteFrom('study_room_presences')
    .where('room_id', '=', roomId)
    .where('user_id', '=', userId)
    .returning('stream_id')
    .execute();
  return rows.length;
}

/** Presences whose stream's lease lapsed or whose row is gone (their process died without a word), at most `limit`. */
export async function lapsedPresences(db: Db, limit: number) {
  return db
    .selectFrom('study_room_presences')
    .select(['stream_id', 'room_id', 'user_id'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('account_leases')
            .select('account_leases.id')
            .whereRef('account_leases.id', '=', 'study_room_presences.stream_id')
            .where('account_leases.expires_at', '>', sql<Date>`statement_timestamp()`),
        ),
      ),
    )
    .orderBy('opened_at')
    .limit(limit)
    .execute();
}

/** Students with the room's stream open now (their stream's lease is live): the room's presence. */
export async function presentMembers(db: Db, roomId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('account_leases')
    .select('user_id')
    .distinct()
    .where('kind', '=', 'stream')
    .where('grp', '=', roomStreamKind(roomId))
    .where('expires_at', '>', sql<Date>`statement_timestamp()`)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

/** The open-stream kind of a room's stream (its lease's group): one bound for every stream of an account, each room told apart. */
export function roomStreamKind(roomId: string): string {
  return `room:${roomId}`;
}

/** The channel a room's new moves are announced on; the payload is the room's id. */
export const ROOM_MOVES_CHANNEL = 'room_moves';

/** How long a room's moves are kept for a stream to resume from. */
const MOVES_KEPT_MS = 24 * 3_600_000;

export interface RoomMove {
  id: number;
  kind: string;
  data: unknown;
}

/** Stores a move of the room (the caller holds its lock) and announces it at the commit; old moves are dropped. */
export async function insertMove(trx: Db, roomId: string, kind: string, data: unknown, at: Date): Promise<void> {
  await trx
    .deleteFrom('study_room_moves')
    .where('room_id', '=', roomId)
    .where('created_at', '<', new Date(at.getTime() - MOVES_KEPT_MS))
    .execute();
  await trx
    .insertInto('study_room_moves')
    .values({ room_id: roomId, kind, data: JSON.stringify(data), created_at: at })
    .execute();
  await notifyOnCommit(trx, ROOM_MOVES_CHANNEL, roomId);
}

/** Wakes the room's streams at the commit without a move to send: a member left, or the room went (they check). */
export async function announceMembershipChange(trx: Db, roomId: string): Promise<void> {
  await notifyOnCommit(trx, ROOM_MOVES_CHANNEL, roomId);
}

/** The room's moves after `after`, in order, at most `limit`. */
export async function movesAfter(db: Db, roomId: string, after: number, limit: number): Promise<RoomMove[]> {
  const rows = await db
    .selectFrom('study_room_moves')
    .select(['id', 'kind', 'data'])
    .where('room_id', '=', roomId)
    .where('id', '>', String(after))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), kind: r.kind, data: r.data }));
}

/** The number of the room's last move (0: none yet) and the oldest kept (for a resumption's check). */
export async function moveBounds(db: Db, roomId: string): Promise<{ last: number; first: number }> {
  const row = await db
    .selectFrom('study_room_moves')
    .select([sql<string | null>`max(id)`.as('last'), sql<string | null>`min(id)`.as('first')])
    .where('room_id', '=', roomId)
    .executeTakeFirstOrThrow();
  return { last: Number(row.last ?? 0), first: Number(row.first ?? 0) };
}
