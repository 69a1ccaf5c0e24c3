// Calendar feed tokens: `scf_` + 32 base62 characters (about 190 bits), the last part of a feed's secret URL. Calendar
// apps cannot send a header, so the URL itself is the credential: only its hash is stored (server/auth/secret-hash.ts),
// and the public prefix (`scf_` + the first 8 random characters) names a feed in listings.
import { randomBase62 } from './api-keys.ts';
import { hashSecret } from './secret-hash.ts';

const TOKEN_PREFIX = 'scf_';
const RANDOM_LENGTH = 32;
const PUBLIC_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;
const TOKEN_SHAPE = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH}}$`);

export interface NewFeedToken {
  token: string;
  prefix: string;
  hash: string;
}

export function generateFeedToken(): NewFeedToken {
  const token = TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);
  return { token, prefix: token.slice(0, PUBLIC_PREFIX_LENGTH), hash: hashSecret(token) };
}

/** Cheap shape check before any database lookup: anything else is no feed's token. */
export function looksLikeFeedToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}
