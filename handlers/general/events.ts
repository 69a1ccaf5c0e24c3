// The changes feed (services/events/feed.ts): the student's events from a stored cursor, in commit order.
import { readFeed } from '../../services/events/feed.ts';
import type { GeneralHandlers } from './types.ts';

export const listEvents: GeneralHandlers['listEvents'] = async ({ query, principal }, { db, now }) => {
  const body = await readFeed(db, principal, { types: query.type, cursor: query.cursor, limit: query.limit }, now());
  // The feed's cursors are the sync's tokens past a full sync: a client that applied this page continues there.
  return { status: 200, body, headers: { 'Sync-Token': body.next_cursor } };
};
