// API keys: `svc_live_` + 32 base62 characters (about 190 bits of randomness). Only their hash is stored
// (server/auth/secret-hash.ts).
// The public prefix (`svc_live_` + the first 8 random characters) names a key in listings and in /health.
import { randomInt } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { DEFAULT_KEY_LIMITS, insertApiKey, type ApiKeyRecord } from '../../db/queries/api-keys.ts';
import { hashSecret } from './secret-hash.ts';

const KEY_PREFIX = 'svc_live_';
const RANDOM_LENGTH = 32;
const PUBLIC_PREFIX_LENGTH = KEY_PREFIX.length + 8;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH}}$`);
/** What a key's public prefix looks like (`keys revoke` checks its argument against it). */
export const PUBLIC_PREFIX_SHAPE = new RegExp(
  `^${KEY_PREFIX}[0-9A-Za-z]{${PUBLIC_PREFIX_LENGTH - KEY_PREFIX.length}}$`,
);

export interface NewApiKey {
  key: string;
  prefix: string;
  hash: string;
}

/** `length` characters of base62, each chosen uniformly (about 5.95 bits each): the random part of every token we mint. */
export function randomBase62(length: number): string {
  let random = '';
  for (let i = 0; i < length; i++) random += ALPHABET[randomInt(ALPHABET.length)];
  return random;
}

export function generateApiKey(): NewApiKey {
  const key = KEY_PREFIX + randomBase62(RANDOM_LENGTH);
  return { key, prefix: key.slice(0, PUBLIC_PREFIX_LENGTH), hash: hashSecret(key) };
}

/** Cheap shape check before any database lookup. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/** Creates a partner key and stores its hash; the returned `key` is the only copy there will ever be. */
export async function issueApiKey(
  db: Db,
  options: { name: string; per_minute?: number; per_day?: number },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const limits = {
    per_minute: options.per_minute ?? DEFAULT_KEY_LIMITS.per_minute,
    per_day: options.per_day ?? DEFAULT_KEY_LIMITS.per_day,
  };
  return insertWithFreshKey(({ prefix, hash }) =>
    insertApiKey(db, { prefix, key_hash: hash, name: options.name, ...limits }),
  );
}

/** Generates a key and stores it with `insert`; the returned `key` is the only copy there will ever be. */
export async function insertWithFreshKey<R>(
  insert: (key: NewApiKey) => Promise<R>,
): Promise<{ key: string; record: R }> {
  // A clash of 8-character prefixes is unlikely but possible; a fresh key resolves it.
  for (let attempt = 0; ; attempt++) {
    const fresh = generateApiKey();
    try {
      return { key: fresh.key, record: await insert(fresh) };
    } catch (error) {
      if (attempt >= 3 || !isUniqueViolation(error)) throw error;
    }
  }
}
