// One mapper from the profile row to the API's UserProfile, shared by account creation and /api/users/me.
import type { ProfileRow } from '../../db/queries/profile.ts';
import { limitsOf, premiumTierOf } from '../../domain/plans.ts';
import { warningBody } from '../../services/accounts/warnings.ts';
import type { Schemas } from './types.ts';

/** How many of a student's warnings the profile shows, newest first. */
export const PROFILE_WARNINGS = 10;

export function profileBody(
  row: ProfileRow,
  warnings: { id: string; reason: string; created_at: Date }[],
): Schemas['UserProfile'] {
  const { contract_per_minute: _m, contract_per_day: _d, contract_ai_per_hour: _a, updated_at, ...fields } = row;
  return {
    ...fields,
    premium_tier: premiumTierOf(row.plan),
    limits: limitsOf(row),
    warnings: warnings.map(warningBody),
    updated_at: updated_at.toISOString(),
  };
}
