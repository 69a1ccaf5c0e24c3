// Secrets the service must read back (the private halves of JWT signing keys; later, webhook signing secrets) are
// stored encrypted with AES-256-GCM under SECRETS_KEY, never in the clear. Each sealed value is bound to a context
// string (e.g. `signing-key:<kid>`) as associated data, so a ciphertext copied onto another row does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRETS_KEY_BYTES = 32;

/**
 * Why a process on PostgreSQL stops without SECRETS_KEY. It asks for the key the database's secrets were sealed with:
 * a new key suits only a database that holds none yet, and after `db move-to-postgres` it would leave the moved
 * secrets unreadable.
 */
export function secretsKeyRequired(sealed: string): string {
  return (
    `SECRETS_KEY is required with DATABASE_URL: it encrypts ${sealed} kept in the database. Set the key the ` +
    "database's servers run with (after db move-to-postgres, the one it printed); only for a database no server has " +
    'run on yet, make one with: openssl rand -base64 32'
  );
}

export interface SecretBox {
  /** `v1.<base64url(iv | tag | ciphertext)>` */
  seal(plaintext: string, context: string): string;
  /** Throws when the value was sealed under another key or context, or was altered. */
  open(sealed: string, context: string): string;
}

export function secretBox(key: Buffer): SecretBox {
  if (key.length !== SECRETS_KEY_BYTES)
    throw new Error(`a secrets key has ${SECRETS_KEY_BYTES} bytes, got ${key.length}`);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
    },
    open(sealed, context) {
      const [version, payload] = sealed.split('.');
      if (version !== VERSION || !payload) throw new Error('not a sealed secret of a known version');
      const bytes = Buffer.from(payload, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new Error(
          `cannot decrypt the stored secret ${context}: SECRETS_KEY is not the key it was encrypted with`,
        );
      }
    },
  };
}
