// One mapper from the profile row to the API's UserProfile, shared by account creation, /api/users/me and the sync's
// pull.
import type { ProfileRow } from '../../db/queries/profile.ts';
import { limitsOf, premiumTierOf } from '../../domain/plans.ts';
import type { components } from '../../generated/general/types.ts';
import { warningBody } from './warnings.ts';

/** How many of a student's warnings the profile shows, newest first. */
export const PROFILE_WARNINGS = 10;

export function profileBody(
  row: ProfileRow,
  warnings: { id: string; reason: string; created_at: Date }[],
): components['schemas']['UserProfile'] {
  const { contract_per_minute: _m, contract_per_day: _d, contract_ai_per_hour: _a, updated_at, ...fields } = row;
  return {
    ...fields,
    premium_tier: premiumTierOf(row.plan),
    limits: limitsOf(row),
    warnings: warnings.map(warningBody),
    updated_at: updated_at.toISOString(),
  };
}
