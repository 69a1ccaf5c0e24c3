// Every operation of spec/partner-v1, by operationId. `satisfies` makes a missing, extra or misspelled
// handler a compile error.
import { getHealth } from './health.ts';
import { listHolidays } from './holidays.ts';
import { getGlobalLeaderboard, getUniversityLeaderboard } from './leaderboards.ts';
import { getStats } from './stats.ts';
import { getUniversity, listUniversities } from './universities.ts';
import { getPublicUserProfile } from './users.ts';
import type { PartnerHandlers } from './types.ts';

export const partnerV1Handlers = {
  getHealth,
  getStats,
  listUniversities,
  getUniversity,
  getPublicUserProfile,
  getGlobalLeaderboard,
  getUniversityLeaderboard,
  listHolidays,
} satisfies PartnerHandlers;
