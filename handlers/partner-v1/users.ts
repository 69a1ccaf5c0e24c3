import { findPublicProfile } from '../../db/queries/users.ts';
import { premiumTierOf } from '../../domain/plans.ts';
import { problems } from '../../server/http/problems.ts';
import type { PartnerHandlers } from './types.ts';

export const getPublicUserProfile: PartnerHandlers['getPublicUserProfile'] = async ({ path }, { db }) => {
  const profile = await findPublicProfile(db, path.nickname);
  if (!profile) throw problems.notFound(`No user has the nickname ${path.nickname}.`);
  const { plan, ...fields } = profile;
  return { status: 200, body: { ...fields, premium_tier: premiumTierOf(plan) } };
};
