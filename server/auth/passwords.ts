// Passwords are stored as Argon2id hashes (OWASP's first choice: memory-hard), with @node-rs/argon2's defaults
// (19 MiB, 2 iterations), which match OWASP's minimum recommendation.
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false; // a malformed stored hash matches nothing
  }
}

let decoy: Promise<string> | undefined;

/** Spends the time of one verification, so an unknown e-mail cannot be told from a wrong password by timing. */
export async function verifyNothing(password: string): Promise<false> {
  decoy ??= hash('decoy password that matches nothing');
  await verifyPassword(await decoy, password);
  return false;
}
