import { revokeRefreshTokensOfOtherGrants } from '../../db/queries/oauth.ts';
import { deleteAccount, setPasswordHash } from '../../db/queries/users.ts';
import { AccountTaken, createAccount as insertNewAccount } from '../../server/auth/accounts.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { passwordConfirmed, signedInFreshly } from '../../server/auth/reauthentication.ts';
import { problems } from '../../server/problems.ts';
import { profileBody } from './profile-body.ts';
import { assertTimeZone } from './time-zones.ts';
import type { GeneralHandlers } from './types.ts';

export const createAccount: GeneralHandlers['createAccount'] = async ({ body }, { db }) => {
  await assertTimeZone(db, body.time_zone, 'body.time_zone');
  try {
    const row = await insertNewAccount(db, {
      email: body.email,
      password: body.password,
      nickname: body.nickname,
      first_name: body.first_name,
      time_zone: body.time_zone ?? 'UTC',
      country_code: body.country_code ?? null,
    });
    return { status: 201, body: profileBody(row, []) };
  } catch (error) {
    if (error instanceof AccountTaken) throw problems.conflict(`${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`);
    throw error;
  }
};

/**
 * A new password, given the current one. The other sign-ins' refresh tokens end (those devices sign in again); their
 * grants, the keys minted through them and the caller's own sign-in are kept.
 */
export const changeMyPassword: GeneralHandlers['changeMyPassword'] = async ({ body, principal }, { db, now }) => {
  if (!(await passwordConfirmed(db, principal.user_id, body.current_password))) {
    throw problems.reauthenticationRequired("The password does not match; send the account's current password.");
  }
  const passwordHash = await hashPassword(body.new_password);
  const keptGrant = principal.credential.kind === 'access_token' ? principal.credential.grant_id : null;
  await db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, principal.user_id, passwordHash, now());
    await revokeRefreshTokensOfOtherGrants(trx, principal.user_id, keptGrant, now());
  });
  return { status: 204, body: undefined };
};

/**
 * Erases the account by the retention policy in the spec (deleteMyAccount), for a fresh sign-in only: the student
 * typed the password at most 5 minutes ago.
 */
export const deleteMyAccount: GeneralHandlers['deleteMyAccount'] = async ({ principal }, { db, now }) => {
  if (!(await signedInFreshly(db, principal.credential, now()))) {
    throw problems.reauthenticationRequired('Sign in again: only a sign-in at most 5 minutes old can delete the account.');
  }
  if (!(await deleteAccount(db, principal.user_id))) throw problems.notFound('This account no longer exists.');
  return { status: 204, body: undefined };
};
