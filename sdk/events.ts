// The changes feed (GET /api/events) as an async iterator that resumes from a stored cursor: for clients without a
// public server, the events a webhook would have delivered, fetched when the client is online.
//
//   const feed = eventFeed(client, { after: await store.get('cursor') });
//   for await (const event of feed) await apply(event);
//   await store.set('cursor', feed.cursor);
//
// The iteration ends once caught up (call it again later). `cursor` moves past a page only when every event of it
// has been handed over and the next one asked for, so a client that stops (or loses the network) mid-feed and stores
// `cursor` misses nothing; one that breaks out of the loop mid-page gets the rest of that page again (de-duplicate on
// `id`, as with webhooks). A stored cursor older than the 30 days events are kept throws with `expired` true: reload
// your data and start again without one.
import type { Client } from 'openapi-fetch';
import type { components, paths } from '../generated/general/types.ts';
import type { WebhookEvent } from './webhooks.ts';

type FeedQuery = NonNullable<paths['/api/events']['get']['parameters']['query']>;
export type EventFeedType = NonNullable<FeedQuery['type']>[number];
type Problem = components['schemas']['Problem'];

export interface EventFeedOptions {
  /** A `cursor` stored earlier; absent: from the oldest event kept. */
  after?: string;
  /** Only these kinds. */
  types?: EventFeedType[];
  /** Events per request, 1 to 100. */
  pageSize?: number;
}

export interface EventFeed extends AsyncIterable<WebhookEvent> {
  /** Where to resume: every event before it has been handed over. Store it; undefined until a page was read whole. */
  readonly cursor: string | undefined;
}

/** A refusal of the feed: `expired` when the cursor is past the retention (resync), else the problem as sent. */
export class EventFeedError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(
      problem ? `${status} ${problem.code}: ${problem.detail ?? problem.title}` : `the changes feed answered ${status}`,
    );
  }

  get expired(): boolean {
    return this.problem?.code === 'cursor_expired';
  }
}

export function eventFeed(client: Client<paths>, options: EventFeedOptions = {}): EventFeed {
  let cursor = options.after;
  return {
    get cursor() {
      return cursor;
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const query: FeedQuery = {
          ...(cursor ? { cursor } : {}),
          ...(options.types ? { type: options.types } : {}),
          ...(options.pageSize ? { limit: options.pageSize } : {}),
        };
        // The spec's `type` is one comma-separated value (style form, explode false).
        const { data, error, response } = await client.GET('/api/events', {
          params: { query },
          querySerializer: { array: { style: 'form', explode: false } },
        });
        if (!data) throw new EventFeedError(response.status, error as Problem | undefined);
        for (const event of data.data) yield event;
        cursor = data.next_cursor;
        if (!data.has_more) return;
      }
    },
  };
}
