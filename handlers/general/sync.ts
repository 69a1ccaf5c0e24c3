// The sync (services/sync/): the full state and a token, then what changed since the token.
import { pullSync as pull } from '../../services/sync/pull.ts';
import type { GeneralHandlers } from './types.ts';

export const pullSync: GeneralHandlers['pullSync'] = async ({ query, principal }, { db, now }) => ({
  status: 200,
  body: await pull(db, principal, { token: query.sync_token, limit: query.limit }, now()),
});
