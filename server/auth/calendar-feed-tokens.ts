// Calendar feed tokens: `scf_` + 32 base62 characters (about 190 bits), the last part of a feed's secret URL. Calendar
// apps cannot send a header, so the URL itself is the credential: only its hash is stored (server/auth/secret-hash.ts),
// and the public prefix (`scf_` + the first 8 random characters) names a feed in listings.
import { randomBase62 } from './api-keys.ts';
import { hashSecret } from './secret-hash.ts';

const TOKEN_PREFIX = 'scf_';
/** The spec's pattern of the feed URL's token (spec/general/paths/calendar-feed-ics.yaml) is this shape. */
const RANDOM_LENGTH = 32;
const PUBLIC_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;

export interface NewFeedToken {
  token: string;
  prefix: string;
  hash: string;
}

export function generateFeedToken(): NewFeedToken {
  const token = TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);
  return { token, prefix: token.slice(0, PUBLIC_PREFIX_LENGTH), hash: hashSecret(token) };
}
