// Long random secrets (API keys, OAuth client secrets, authorization codes, refresh tokens) are stored as their
// SHA-256 only. A fast unsalted hash is right for them, unlike for passwords (server/auth/passwords.ts): with 160
// bits of randomness or more they cannot be guessed, and a plain digest finds the row by an indexed lookup.
import { createHash } from 'node:crypto';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
