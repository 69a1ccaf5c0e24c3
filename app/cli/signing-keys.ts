// keys rotate-signing: a new key signs OAuth access tokens from now on; the previous ones keep verifying the tokens
// they signed until those expire, so nobody is signed out. Running processes pick the new key up within a minute.
import { ACCESS_TOKEN_TTL_SECONDS } from '../../server/auth/access-tokens.ts';
import { signingKeyStoreFor } from '../../server/auth/signing-key-store.ts';
import { retiredKeyVerifiesMs, rotateSigningKey } from '../../server/auth/signing-keys.ts';
import { loadConfig } from '../config.ts';
import { note, parse, print, withDb } from './shared.ts';

export async function rotateSigning(args: string[]): Promise<void> {
  parse(args, {});
  const config = loadConfig();
  const { key, previous, where } = await withDb(async (db) => {
    const store = signingKeyStoreFor(config, db);
    if (!store)
      throw new Error(
        'JWT_PRIVATE_KEY is set, so the service signs with that key alone; unset it to use rotating stored keys',
      );
    const now = new Date();
    const previous = (await store.list(now)).filter((k) => k.retired_at === null);
    return { key: await rotateSigningKey(store, ACCESS_TOKEN_TTL_SECONDS, now), previous, where: store.where };
  });
  const until = new Date(key.created_at.getTime() + retiredKeyVerifiesMs(ACCESS_TOKEN_TTL_SECONDS)).toISOString();
  note(`stored in ${where}; running processes sign with it within a minute\n`);
  if (previous.length > 0) note(`the previous key ${previous.map((k) => k.kid).join(', ')} verifies until ${until}\n`);
  print(`new signing key ${key.kid}`);
}
