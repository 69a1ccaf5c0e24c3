// The worker's sweep of the study rooms, so that what the clock alone brings happens without anyone watching:
//   - a focus session that ran its whole length is recorded as finished (its `finished` move, the members' study day
//     and xp, room.session_finished and its webhooks) within SWEEP_EVERY_MS of its planned end, not at the room's
//     next read or write;
//   - a member whose room stream's process died gets its `left` move once the stream's lease lapses, so the streams
//     on other processes see them go.
// Both are idempotent with the streams' and the visitors' own recording, and with the sweeps of other worker
// processes: a finish is recorded under the room's lock once (recordFinishedSessions), and a presence's row is
// deleted under it once (endPresence). The sessions are looked at every SWEEP_EVERY_MS, one index range that is
// empty most of the time; the presences, which a lease keeps for 45 s anyway, every PRESENCE_SWEEP_EVERY_MS, since
// their read is a pass over the room streams open (a stream's lease row may be deleted before the sweep sees it
// lapse, so the read looks for presences without a live lease, not for lapsed leases). Both work in batches, and a
// full batch runs the next pass at once.
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { lapsedPresences, roomsWithDueSessions } from '../../db/queries/rooms.ts';
import type { Lifecycle } from '../../server/process/lifecycle.ts';
import { endPresence, recordFinishedSessions } from './writes.ts';

/** How soon after its planned end a session nobody watches is recorded: "within seconds", for one index probe. */
export const SWEEP_EVERY_MS = 1_000;
/** How often lapsed presences are looked for: small beside the 45 s lease that decides when they lapse. */
export const PRESENCE_SWEEP_EVERY_MS = 15_000;
/** Rooms or presences one pass handles at most; a full batch runs the next pass at once. */
export const SWEEP_BATCH = 100;

/** Records the finish of the sessions due as of `now`; true when the batch was full (more may be waiting). */
export async function finishDueSessions(db: Db, now: Date, batch = SWEEP_BATCH): Promise<boolean> {
  const rooms = await roomsWithDueSessions(db, now, batch);
  await recordFinishedSessions(db, rooms, now);
  return rooms.length === batch;
}

/** Writes the `left` move of the presences whose stream's lease is gone; true when the batch was full. */
export async function endLapsedPresences(db: Db, now: Date, batch = SWEEP_BATCH): Promise<boolean> {
  const presences = await lapsedPresences(db, batch);
  for (const presence of presences) await endPresence(db, presence.room_id, presence.stream_id, now);
  return presences.length === batch;
}

export interface RoomSweep {
  /** No pass starts from now on; resolves once the running one (if any) has ended. */
  stop(): Promise<void>;
}

export function startRoomSweep(options: { db: Db; lifecycle: Lifecycle; logger: Logger }): RoomSweep {
  const { db, lifecycle, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let presencesDue = 0;
  const stopping = () => stopped || lifecycle.draining;

  const pass = async (): Promise<boolean> => {
    const more = await finishDueSessions(db, new Date());
    if (performance.now() < presencesDue) return more;
    const morePresences = await endLapsedPresences(db, new Date());
    if (!morePresences) presencesDue = performance.now() + PRESENCE_SWEEP_EVERY_MS;
    return more || morePresences;
  };
  const run = () => {
    if (stopping()) return;
    running = lifecycle
      .hold(pass())
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'the study rooms could not be swept; trying again');
        return false;
      })
      .then((more) => {
        running = undefined;
        if (!stopping()) timer = setTimeout(run, more ? 0 : SWEEP_EVERY_MS);
      });
  };
  run();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
