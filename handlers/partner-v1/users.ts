import { findPublicProfile } from '../../db/queries/users.ts';
import { problems } from '../../server/problems.ts';
import type { PartnerHandlers, Schemas } from './types.ts';

export const getPublicUserProfile: PartnerHandlers['getPublicUserProfile'] = async ({ path }, { db }) => {
  const profile = await findPublicProfile(db, path.nickname);
  if (!profile) throw problems.notFound(`No user has the nickname ${path.nickname}.`);
  return { status: 200, body: { ...profile, premium_tier: profile.premium_tier as Schemas['PremiumTier'] } };
};
