// A new password for an account, the one way it changes: the student's own change (changeMyPassword) and an
// operator's reset (the CLI's users reset-password) both end every other sign-in with everything it owns
// (GRANT_ARTIFACTS) in the transaction that stores the new hash, so that a credential taken before the change keeps
// nothing, in any process (changingPrincipals drops the cached principals on commit).
import type { Db } from '../../db/connect.ts';
import { revokeOtherSignIns } from '../../db/queries/oauth.ts';
import { changingPrincipals } from '../../db/queries/principal-changes.ts';
import { setPasswordHash } from '../../db/queries/users.ts';
import { hashPassword } from '../../server/auth/passwords.ts';

export interface PasswordReplacement {
  /** The grant that keeps its sign-in (the one making the change), or null: every sign-in ends. */
  keptGrantId: string | null;
  /** Why the other grants were revoked, as their revocation records it. */
  reason: 'password_changed' | 'password_reset';
  at: Date;
}

export async function replacePassword(
  db: Db,
  userId: string,
  password: string,
  { keptGrantId, reason, at }: PasswordReplacement,
): Promise<void> {
  const passwordHash = await hashPassword(password);
  await changingPrincipals(db, async (trx, changed) => {
    await setPasswordHash(trx, userId, passwordHash, at);
    await revokeOtherSignIns(trx, userId, keptGrantId, reason, at, changed);
  });
}
