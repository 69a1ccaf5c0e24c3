// The plans of the general surface and the limits each grants (the product document's table). Limits count per
// account, whatever token or key it uses, so a second key never doubles a quota.
import type { components } from '../../generated/general/types.ts';

export type Plan = components['schemas']['Plan'];
export type PlanLimits = components['schemas']['PlanLimits'];

export const STANDARD_PLAN_LIMITS: Record<Exclude<Plan, 'contract'>, PlanLimits> = {
  free: { per_minute: 60, per_day: 10_000, ai_per_hour: 20 },
  plus: { per_minute: 600, per_day: 100_000, ai_per_hour: 200 },
};

export interface PlanColumns {
  plan: Plan;
  contract_per_minute: number | null;
  contract_per_day: number | null;
  contract_ai_per_hour: number | null;
}

/** A contractual account's limits are its own columns (a database check keeps them set for that plan). */
export function limitsOf(account: PlanColumns): PlanLimits {
  if (account.plan !== 'contract') return STANDARD_PLAN_LIMITS[account.plan];
  return {
    per_minute: account.contract_per_minute ?? STANDARD_PLAN_LIMITS.free.per_minute,
    per_day: account.contract_per_day ?? STANDARD_PLAN_LIMITS.free.per_day,
    ai_per_hour: account.contract_ai_per_hour ?? STANDARD_PLAN_LIMITS.free.ai_per_hour,
  };
}
