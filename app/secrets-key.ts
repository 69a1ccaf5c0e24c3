// The key that seals secrets stored in the database (server/auth/secret-box.ts): SECRETS_KEY when set; on the embedded
// database without it, a key file created once in DATA_DIR (mode 0600), since one process serves from that
// directory and the file lives and is backed up with the data it opens. An in-memory database gets a key that
// lives as long as the process, like its data.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';
import { ConfigError } from '../server/process/config-error.ts';
import { SECRETS_KEY_BYTES, secretsKeyRequired } from '../server/auth/secret-box.ts';

export const SECRETS_KEY_FILE = 'secrets.key';

const processKey = randomBytes(SECRETS_KEY_BYTES);

export function secretsKeyFor(config: Pick<Config, 'database' | 'secretsKey'>): Buffer {
  if (config.secretsKey) return config.secretsKey;
  if ('databaseUrl' in config.database) {
    throw new ConfigError(secretsKeyRequired('the webhook signing secrets'));
  }
  if ('pglite' in config.database || config.database.dataDir.startsWith('memory://')) return processKey;
  const path = join(config.database.dataDir, SECRETS_KEY_FILE);
  try {
    // 'wx': created once; a second start (or a racing one) reads the file the first one wrote.
    writeFileSync(path, randomBytes(SECRETS_KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== SECRETS_KEY_BYTES)
    throw new ConfigError(`${path} does not hold a ${SECRETS_KEY_BYTES}-byte key in base64`);
  return key;
}
