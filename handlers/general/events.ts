// The changes feed (services/events/feed.ts): the student's events from a stored cursor, in commit order.
import { readFeed } from '../../services/events/feed.ts';
import type { GeneralHandlers } from './types.ts';

export const listEvents: GeneralHandlers['listEvents'] = async ({ query, principal }, { db, now }) => ({
  status: 200,
  body: await readFeed(db, principal, { types: query.type, cursor: query.cursor, limit: query.limit }, now()),
});
