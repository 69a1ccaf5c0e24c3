// The plans of the general surface and the limits each grants (the product document's table). Limits count per
// account, whatever token or key it uses, so a second key never doubles a quota.
import type { components } from '../generated/general/types.ts';

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

export type PremiumTier = components['schemas']['PremiumTier'];

/**
 * The one mapping between the two vocabularies: the general surface's `plan` is the record, partner v1 (locked, so its
 * values stay) shows it as `premium_tier`, with `contract` named `pro`.
 */
export function premiumTierOf(plan: Plan): PremiumTier {
  return plan === 'contract' ? 'pro' : plan;
}

/** A plan change that cannot be made as asked; the message says what to give instead. */
export class PlanChangeError extends Error {}

/**
 * The plan columns after an operator puts an account on `plan`. A contract's limits are agreed, so they are never
 * invented: each one is given or kept from the account's current contract. Standard plans have fixed limits.
 */
export function planChange(current: PlanColumns, plan: Plan, limits: Partial<PlanLimits>): PlanColumns {
  if (plan !== 'contract') {
    if (Object.values(limits).some((v) => v !== undefined))
      throw new PlanChangeError(`limits are agreed for the contract plan only; ${plan} has fixed limits`);
    return { plan, contract_per_minute: null, contract_per_day: null, contract_ai_per_hour: null };
  }
  const agreed = current.plan === 'contract' ? current : undefined;
  const columns = {
    plan,
    contract_per_minute: limits.per_minute ?? agreed?.contract_per_minute ?? null,
    contract_per_day: limits.per_day ?? agreed?.contract_per_day ?? null,
    contract_ai_per_hour: limits.ai_per_hour ?? agreed?.contract_ai_per_hour ?? null,
  };
  const missing = Object.entries({
    'per-minute': columns.contract_per_minute,
    'per-day': columns.contract_per_day,
    'ai-per-hour': columns.contract_ai_per_hour,
  })
    .filter(([, value]) => value === null)
    .map(([name]) => `--${name}`);
  if (missing.length > 0)
    throw new PlanChangeError(
      `the contract plan needs its agreed limits: give ${missing.join(', ')} (the account has no contract to keep them from)`,
    );
  return columns;
}

/**
 * The plan columns after a payment for `paid`. A payment never lowers an account: a contract account that pays for
 * plus stays on its contract. Paying for the contract plan renews the agreed limits, which must exist already.
 */
export function planAfterPayment(current: PlanColumns, paid: 'plus' | 'contract'): PlanColumns {
  if (paid === 'plus' && current.plan === 'contract') return current;
  return planChange(current, paid, {});
}
