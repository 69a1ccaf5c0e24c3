// Where a deployment keeps its access-token signing keys, chosen from the configuration:
// - JWT_PRIVATE_KEY set: that one key, nothing stored (rotation is the operator's, by replacing it);
// - the embedded database: a file in DATA_DIR (mode 0600), since one process serves from that directory;
// - PostgreSQL: the `signing_keys` table, private halves sealed under SECRETS_KEY, so every process signs and
//   verifies with the same set.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { listSigningKeys, rotateSigningKeys, type SigningKeyRow } from '../../db/queries/signing-keys.ts';
import type { Db, DbTarget } from '../../db/connect.ts';
import { ConfigError } from '../process/config-error.ts';
import { secretBox, secretsKeyRequired } from './secret-box.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from './access-tokens.ts';
import {
  loadSigningKey,
  storedSigningKeys,
  type SigningKeys,
  type SigningKeyStore,
  type StoredKey,
} from './signing-keys.ts';

export const SIGNING_KEYS_FILE = 'signing-keys.json';

/** The settings (app/config.ts) that say where signing keys come from. */
type KeyConfig = { database: DbTarget; jwtPrivateKey: string | undefined; secretsKey: Buffer | undefined };

/** Where this configuration's signing keys come from; a ConfigError when it cannot keep them safely. */
export function signingKeySource(config: KeyConfig): 'JWT_PRIVATE_KEY' | 'DATA_DIR' | 'database' {
  if (config.jwtPrivateKey) return 'JWT_PRIVATE_KEY';
  if ('dataDir' in config.database) return 'DATA_DIR';
  if (!config.secretsKey) {
    throw new ConfigError(`${secretsKeyRequired('the JWT signing keys')} (or set JWT_PRIVATE_KEY)`);
  }
  return 'database';
}

/** The store of this configuration, or undefined when JWT_PRIVATE_KEY fixes the key. */
export function signingKeyStoreFor(config: KeyConfig, db: Db): SigningKeyStore | undefined {
  const source = signingKeySource(config);
  if (source === 'JWT_PRIVATE_KEY') return undefined;
  if ('dataDir' in config.database) return fileSigningKeyStore(config.database.dataDir);
  return databaseSigningKeyStore(db, config.secretsKey!);
}

/** The signing keys of this configuration: JWT_PRIVATE_KEY alone, or the stored set (its first key made if none). */
export async function signingKeysFor(
  config: KeyConfig,
  db: Db,
  onReloadError: (error: unknown) => void,
): Promise<SigningKeys & { stop(): void }> {
  const store = signingKeyStoreFor(config, db);
  if (!store) return { ...(await loadSigningKey(config.jwtPrivateKey)), stop: () => {} };
  return storedSigningKeys(store, { tokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS, now: () => new Date(), onReloadError });
}

interface FileContents {
  keys: Array<{ kid: string; private_jwk: JWK; created_at: string; retired_at: string | null }>;
}

export function fileSigningKeyStore(dataDir: string): SigningKeyStore {
  const path = join(dataDir, SIGNING_KEYS_FILE);
  const read = (): StoredKey[] => {
    let contents: FileContents;
    try {
      contents = JSON.parse(readFileSync(path, 'utf8')) as FileContents;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new Error(`cannot read the signing keys in ${path}: ${(error as Error).message}`, { cause: error });
    }
    return contents.keys.map((k) => ({
      kid: k.kid,
      privateJwk: k.private_jwk,
      created_at: new Date(k.created_at),
      retired_at: k.retired_at ? new Date(k.retired_at) : null,
    }));
  };
  return {
    where: path,
    async list(retiredSince) {
      return read()
        .filter((k) => k.retired_at === null || k.retired_at > retiredSince)
        .sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
    },
    async rotate(key, forgetBefore) {
      const kept = read()
        .filter((k) => k.retired_at === null || k.retired_at >= forgetBefore)
        .map((k) => ({ ...k, retired_at: k.retired_at ?? key.created_at }));
      const contents: FileContents = {
        keys: [key, ...kept].map((k) => ({
          kid: k.kid,
          private_jwk: k.privateJwk,
          created_at: k.created_at.toISOString(),
          retired_at: k.retired_at?.toISOString() ?? null,
        })),
      };
      // Written whole and renamed into place: a reader never sees half a file. Private keys: owner only.
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(contents, null, 2) + '\n', { mode: 0o600 });
      renameSync(temporary, path);
    },
  };
}

const sealContext = (kid: string) => `signing-key:${kid}`;

/** A key as the signing_keys table keeps it: its private half sealed under SECRETS_KEY, bound to its kid. */
export function sealedSigningKey(secretsKey: Buffer, key: StoredKey): SigningKeyRow {
  return {
    kid: key.kid,
    private_key_sealed: secretBox(secretsKey).seal(JSON.stringify(key.privateJwk), sealContext(key.kid)),
    created_at: key.created_at,
    retired_at: key.retired_at,
  };
}

export function databaseSigningKeyStore(db: Db, secretsKey: Buffer): SigningKeyStore {
  const box = secretBox(secretsKey);
  const context = sealContext;
  return {
    where: 'the database (table signing_keys)',
    async list(retiredSince) {
      const rows = await listSigningKeys(db, retiredSince);
      return rows.map((row) => ({
        ...row,
        privateJwk: JSON.parse(box.open(row.private_key_sealed, context(row.kid))) as JWK,
      }));
    },
    async rotate(key, forgetBefore) {
      const { kid, private_key_sealed } = sealedSigningKey(secretsKey, key);
      await rotateSigningKeys(db, { kid, private_key_sealed }, key.created_at, forgetBefore);
    },
  };
}
