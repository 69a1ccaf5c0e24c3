import { topUsersByXp } from '../../db/queries/leaderboards.ts';
import { universityExists } from '../../db/queries/universities.ts';
import { problems } from '../../server/http/problems.ts';
import { activeSince } from './activity.ts';
import type { PartnerHandlers, Schemas } from './types.ts';

/** Boards are frozen, as kept in memory: sent as bytes serialized once (server/http/frozen-json.ts). */
type Board = Schemas['LeaderboardEntry'][];

export const getGlobalLeaderboard: PartnerHandlers['getGlobalLeaderboard'] = async ({ query }, { db, now }) => ({
  status: 200,
  body: (await topUsersByXp(db, { activeSince: activeSince(now()), limit: query.limit })) as Board,
});

export const getUniversityLeaderboard: PartnerHandlers['getUniversityLeaderboard'] = async (
  { path, query },
  { db, now },
) => {
  if (!(await universityExists(db, path.uni_id))) throw problems.notFound(`No university has id ${path.uni_id}.`);
  return {
    status: 200,
    body: (await topUsersByXp(db, {
      activeSince: activeSince(now()),
      limit: query.limit,
      universityId: path.uni_id,
    })) as Board,
  };
};
