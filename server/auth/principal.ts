// Who a general-surface request acts for: one student, through an OAuth access token or a personal API key.
import type { components } from '../../generated/general/types.ts';
import type { Plan, PlanLimits } from '../../domain/plans.ts';

export type Scope = components['schemas']['Scope'];

export type Credential =
  | { kind: 'access_token'; client_id: string; grant_id: string }
  /** `grant_id`: the OAuth grant the key was minted through, which it ends with; null for a key made outside OAuth. */
  | { kind: 'api_key'; key_id: string; prefix: string; grant_id: string | null };

/** The student a study write acts for: who, and the time zone their day is counted in. */
export interface Student {
  user_id: string;
  time_zone: string;
}

export interface GeneralPrincipal {
  user_id: string;
  scopes: readonly Scope[];
  plan: Plan;
  limits: PlanLimits;
  /** The student's IANA time zone: "today" and weeks are computed in it. */
  time_zone: string;
  /** Lower-case ISO alpha-2, or null; its public holidays appear in the schedule. */
  country_code: string | null;
  credential: Credential;
}
