// The sync (services/sync/): the full state and a token, then what changed since the token; and a phone's queued
// edits pushed in one batch, each answered ok or with the problem its REST operation would have answered.
import { pushCommands } from '../../services/sync/commands.ts';
import { pullSync as pull } from '../../services/sync/pull.ts';
import { problemFields, problemOf } from '../../server/http/problems.ts';
import type { GeneralHandlers } from './types.ts';

export const pullSync: GeneralHandlers['pullSync'] = async ({ query, principal }, { db, now }) => ({
  status: 200,
  body: await pull(db, principal, { token: query.sync_token, limit: query.limit }, now()),
});

export const pushSyncCommands: GeneralHandlers['pushSyncCommands'] = async (
  { body, principal },
  { db, now, takeMoreRequests },
) => {
  // A batch pays one request per command it applies, as the REST operations would: the push itself was counted as
  // one at the edge, which pays for its first new command; the others are taken from the same windows before any is
  // applied. Those past what is left answer 429 rate_limited and change nothing; the answer's RateLimit says what is
  // left after the batch, and its Retry-After, when some did not fit, when to send them again.
  let headers: Record<string, string> = {};
  const quota = {
    async take(count: number) {
      const more = await takeMoreRequests(principal, count - 1);
      headers = more.headers;
      return { granted: 1 + more.taken, refusal: more.refusal };
    },
  };
  const { results, temp_id_mapping } = await pushCommands(db, principal, body.commands, now(), quota);
  const answered = results.map((result) => {
    if (!('error' in result)) return { ...result, status: 'ok' as const };
    const problem = problemOf(result.error);
    // A fault of ours (a bug) is the batch's 500, as it would be the REST request's; the commands before it stay done.
    if (!problem) throw result.error;
    return { uuid: result.uuid, status: 'error' as const, error: problemFields(problem) };
  });
  return { status: 200, body: { results: answered, temp_id_mapping }, headers };
};
