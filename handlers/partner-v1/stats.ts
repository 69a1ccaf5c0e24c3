import { getServiceStats } from '../../db/queries/stats.ts';
import { activeSince } from './activity.ts';
import type { PartnerHandlers } from './types.ts';

export const getStats: PartnerHandlers['getStats'] = async (_input, { db, now }) => {
  const at = now();
  const counts = await getServiceStats(db, activeSince(at));
  return { status: 200, body: { ...counts, generated_at: at.toISOString() } };
};
