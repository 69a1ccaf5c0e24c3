// The readiness streams of this process, grouped by student: a move of a student's readiness is read once per process
// (one query), whatever the number of that student's streams here, and each stream is handed the moves after the
// version it sent last. One subscription to the readiness channel serves every group; a notification names its
// student, so it wakes that student's group only.
import type { Db } from '../../db/connect.ts';
import type { Notifications } from '../../db/notifications.ts';
import { KEPT_WITHOUT_NOTIFICATION_MS } from '../../db/notifications-after-commit.ts';
import { movesSince, parseMove, READINESS_CHANNEL, type ReadinessMove } from './readiness.ts';

/** One stream of a group. */
export interface ReadinessFollower {
  /** The version this stream has sent last. */
  readonly version: number;
  /** The moves after `version`, in order; the stream sends them and moves its version to the last one. */
  deliver(moves: ReadinessMove[]): void;
  /** The moves could not be read: the stream ends. */
  fail(error: unknown): void;
}

export interface ReadinessGroups {
  /**
   * Adds a stream to its student's group and reads at once what moved since its version (moves committed between its
   * opening read and now were announced to nobody yet). Returns the call that takes it out.
   */
  join(userId: string, follower: ReadinessFollower): () => void;
}

interface Group {
  followers: Set<ReadinessFollower>;
  reading: boolean;
  /** A wake-up came while reading: read again once done. */
  again: boolean;
}

/**
 * How often a readiness stream reads its moves again whether or not one was announced: its announcements are sent
 * after their commits, which a dying process can fail to send (docs/features.md states it; test/house/staleness.test.ts
 * holds the text to it).
 */
export const READINESS_CATCH_UP_MS = KEPT_WITHOUT_NOTIFICATION_MS;

/**
 * `catchUpEveryMs`: how often every group reads again whether or not a move was announced (below). A test shortens it.
 */
export function readinessGroups(
  db: Db,
  notifications: Notifications,
  { catchUpEveryMs = READINESS_CATCH_UP_MS } = {},
): ReadinessGroups {
  const groups = new Map<string, Group>();

  const catchUp = async (userId: string, group: Group) => {
    do {
      group.again = false;
      if (group.followers.size === 0) return;
      const following = [...group.followers];
      const from = Math.min(...following.map((follower) => follower.version));
      let moves: ReadinessMove[];
      try {
        moves = await movesSince(db, userId, from);
      } catch (error) {
        for (const follower of following) if (group.followers.has(follower)) follower.fail(error);
        return;
      }
      // What moved after `from` contains what moved after any later version (each exam once, in its latest move).
      // A stream that joined during the read with an earlier version is served by the next round.
      for (const follower of following) {
        if (!group.followers.has(follower) || follower.version < from) continue;
        const fresh = moves.filter((move) => move.version > follower.version);
        if (fresh.length > 0) follower.deliver(fresh);
      }
    } while (group.again);
  };

  const wake = (userId: string) => {
    const group = groups.get(userId);
    if (!group) return;
    if (group.reading) return void (group.again = true);
    group.reading = true;
    void catchUp(userId, group).finally(() => {
      group.reading = false;
      if (group.followers.size === 0 && groups.get(userId) === group) groups.delete(userId);
    });
  };

  notifications.subscribe(READINESS_CHANNEL, {
    message: (payload) => {
      const move = parseMove(payload);
      if (move) wake(move.userId);
    },
    // Moves may have been announced while nothing listened: every group reads again.
    missed: () => [...groups.keys()].forEach(wake),
  });
  // A move is announced after its commit (notifyAfterCommit), so a writer that dies in between announces it to no one:
  // every group reads again this often, and such a move reaches its streams all the same.
  setInterval(() => [...groups.keys()].forEach(wake), catchUpEveryMs).unref();

  return {
    join(userId, follower) {
      let group = groups.get(userId);
      if (!group) groups.set(userId, (group = { followers: new Set(), reading: false, again: false }));
      group.followers.add(follower);
      // Joined during a read: the next round reads from this stream's version too.
      group.again = true;
      wake(userId);
      return () => {
        group.followers.delete(follower);
        if (group.followers.size === 0 && !group.reading && groups.get(userId) === group) groups.delete(userId);
      };
    },
  };
}
