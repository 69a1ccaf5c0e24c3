// The ES256 keys that sign and verify OAuth access tokens. Three sources, chosen by configuration
// (server/auth/signing-key-store.ts): JWT_PRIVATE_KEY (one fixed key, as before), keys stored for the deployment
// (a file in DATA_DIR, or the database on PostgreSQL), or, in tests and benchmarks, a key made for the process.
// Stored keys rotate without downtime: the newest key signs, and a retired key verifies until every token it
// signed has expired; each process re-reads the set every minute, and at once when a token names a kid it lacks.
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type CryptoKey,
  type JWK,
  type KeyObject,
} from 'jose';

export const SIGNING_ALGORITHM = 'ES256';

type Key = CryptoKey | KeyObject | Uint8Array;

export interface KeyPair {
  kid: string;
  privateKey: Key;
  publicKey: Key;
  /** With kid, alg and use: a member of the JWKS. */
  publicJwk: JWK;
}

export interface SigningKeys {
  /** The key that signs new tokens. */
  signer(): KeyPair;
  /** The public key named by a token's kid, or undefined when no key of the set has it. */
  verifier(kid: string | undefined): Promise<Key | undefined>;
  /** The public halves of every key that verifies: the JWKS at /oauth/jwks.json. */
  jwks(): JWK[];
}

/** A stored key: its private JWK and its life. */
export interface StoredKey {
  kid: string;
  privateJwk: JWK;
  created_at: Date;
  retired_at: Date | null;
}

/** Where a deployment keeps its keys. `list` returns the keys that sign or still verify, newest first. */
export interface SigningKeyStore {
  /** Names the place for messages, e.g. `the database` or `.data/signing-keys.json`. */
  where: string;
  list(retiredSince: Date): Promise<StoredKey[]>;
  /** Stores `key` as the one that signs; retires the others at `now`; forgets keys retired before `forgetBefore`. */
  rotate(key: StoredKey, forgetBefore: Date): Promise<void>;
}

/** How often a process re-reads the stored keys, so a rotation done elsewhere reaches it. */
export const RELOAD_INTERVAL_MS = 60_000;
/** An unknown kid triggers a re-read at most this often (a flood of forged kids must not flood the store). */
const UNKNOWN_KID_RELOAD_MS = 5_000;

/**
 * How long a retired key still verifies: the lifetime of the last token it signed, plus the time a process that has
 * not yet re-read the set may go on signing with it, plus a minute of clock skew.
 */
export function retiredKeyVerifiesMs(tokenTtlSeconds: number): number {
  return tokenTtlSeconds * 1000 + RELOAD_INTERVAL_MS + 60_000;
}

export async function newStoredKey(now: Date): Promise<StoredKey> {
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const { d: _private, ...publicJwk } = privateJwk;
  return { kid: await calculateJwkThumbprint(publicJwk), privateJwk, created_at: now, retired_at: null };
}

async function keyPair(privateJwk: JWK): Promise<KeyPair> {
  const { d: _private, ...publicOnly } = privateJwk;
  const kid = await calculateJwkThumbprint(publicOnly);
  return {
    kid,
    privateKey: await importJWK(privateJwk, SIGNING_ALGORITHM),
    publicKey: await importJWK(publicOnly, SIGNING_ALGORITHM),
    publicJwk: { ...publicOnly, kid, alg: SIGNING_ALGORITHM, use: 'sig' },
  };
}

function fixedSigningKeys(pair: KeyPair): SigningKeys {
  return {
    signer: () => pair,
    verifier: async (kid) => (kid === undefined || kid === pair.kid ? pair.publicKey : undefined),
    jwks: () => [pair.publicJwk],
  };
}

/**
 * One fixed key: `JWT_PRIVATE_KEY` (an ES256 PKCS#8 PEM) when given; otherwise a key made now, which dies with the
 * process (`generated: true`) — for tests and benchmarks, or a deployment that chose neither a file nor a database.
 */
export async function loadSigningKey(pem: string | undefined): Promise<SigningKeys & { generated: boolean }> {
  if (pem) {
    const imported = await importPKCS8(pem, SIGNING_ALGORITHM, { extractable: true });
    return { ...fixedSigningKeys(await keyPair(await exportJWK(imported))), generated: false };
  }
  return { ...fixedSigningKeys(await keyPair((await newStoredKey(new Date())).privateJwk)), generated: true };
}

/** Adds a new signing key to `store`; the previous ones verify for `retiredKeyVerifiesMs` more. */
export async function rotateSigningKey(store: SigningKeyStore, tokenTtlSeconds: number, now: Date): Promise<StoredKey> {
  const key = await newStoredKey(now);
  await store.rotate(key, new Date(now.getTime() - retiredKeyVerifiesMs(tokenTtlSeconds)));
  return key;
}

/**
 * The key set of `store`, creating the first key when none signs yet. Two processes that start together on an
 * empty store may both create one: harmless, the newer signs and both verify.
 */
export async function storedSigningKeys(
  store: SigningKeyStore,
  options: { tokenTtlSeconds: number; now: () => Date; onReloadError: (error: unknown) => void },
): Promise<SigningKeys & { stop(): void }> {
  const read = async () => {
    const since = new Date(options.now().getTime() - retiredKeyVerifiesMs(options.tokenTtlSeconds));
    let keys = await store.list(since);
    if (!keys.some((k) => k.retired_at === null)) {
      await rotateSigningKey(store, options.tokenTtlSeconds, options.now());
      keys = await store.list(since);
    }
    const pairs = await Promise.all(keys.map((k) => keyPair(k.privateJwk)));
    const signer = pairs[keys.findIndex((k) => k.retired_at === null)]!;
    return { signer, byKid: new Map(pairs.map((p) => [p.kid, p])) };
  };
  let current = await read();
  let lastRead = Date.now();
  const reload = async () => {
    lastRead = Date.now();
    try {
      current = await read();
    } catch (error) {
      options.onReloadError(error); // keep verifying with the set already known
    }
  };
  const timer = setInterval(() => void reload(), RELOAD_INTERVAL_MS).unref();
  return {
    signer: () => current.signer,
    async verifier(kid) {
      if (kid === undefined) return undefined;
      if (!current.byKid.has(kid) && Date.now() - lastRead >= UNKNOWN_KID_RELOAD_MS) await reload();
      return current.byKid.get(kid)?.publicKey;
    },
    jwks: () => [...current.byKid.values()].map((p) => p.publicJwk),
    stop: () => clearInterval(timer),
  };
}
