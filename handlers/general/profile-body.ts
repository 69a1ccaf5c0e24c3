// One mapper from the profile row to the API's UserProfile, shared by account creation and /api/users/me.
import type { ProfileRow } from '../../db/queries/profile.ts';
import { limitsOf } from '../../server/general/plans.ts';
import type { Schemas } from './types.ts';

export function profileBody(row: ProfileRow): Schemas['UserProfile'] {
  const { contract_per_minute: _m, contract_per_day: _d, contract_ai_per_hour: _a, updated_at, ...fields } = row;
  return {
    ...fields,
    premium_tier: row.premium_tier as Schemas['PremiumTier'],
    limits: limitsOf(row),
    updated_at: updated_at.toISOString(),
  };
}
