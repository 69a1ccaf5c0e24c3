// Sensitive account operations (a password change, deleting the account) check again who is at the keyboard, after
// GitHub's sudo mode: the current password, or, where allowed, a sign-in that typed it at most 5 minutes ago. A
// stolen access token (15 minutes) or personal key alone cannot take an account over or erase it.
import type { Db } from '../../db/connect.ts';
import { findSignInTime } from '../../db/queries/oauth.ts';
import { findPasswordHash } from '../../db/queries/users.ts';
import type { Credential } from './principal.ts';
import { verifyNothing, verifyPassword } from './passwords.ts';

/** How recent a sign-in must be to stand in for the password ("fresh"), as GitHub's sudo mode does. */
export const FRESH_SIGN_IN_SECONDS = 5 * 60;

/** Whether `password` is the account's password; spends a verification's time either way. */
export async function passwordConfirmed(db: Db, userId: string, password: string | undefined): Promise<boolean> {
  if (password === undefined) return false;
  const hash = await findPasswordHash(db, userId);
  return hash ? verifyPassword(hash, password) : verifyNothing(password);
}

/**
 * Whether the credential is an access token of a sign-in where the student typed the password at most
 * FRESH_SIGN_IN_SECONDS ago (the grant's `authenticated_at`, set by the sign-in page). Refreshing keeps the sign-in
 * time; client credentials, personal keys and an institution's tokens (exchanged for the student, RFC 8693: the
 * institution acts for the student, it is not the student at the keyboard) never qualify.
 */
export async function signedInFreshly(db: Db, credential: Credential, now: Date): Promise<boolean> {
  if (credential.kind !== 'access_token') return false;
  const signedInAt = await findSignInTime(db, credential.grant_id);
  return signedInAt !== null && now.getTime() - signedInAt.getTime() <= FRESH_SIGN_IN_SECONDS * 1000;
}
