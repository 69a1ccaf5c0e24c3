import { violatedConstraint } from '../../db/errors.ts';
import { insertAccount } from '../../db/queries/profile.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { problems } from '../../server/problems.ts';
import { profileBody } from './profile-body.ts';
import { assertTimeZone } from './time-zones.ts';
import type { GeneralHandlers } from './types.ts';

export const createAccount: GeneralHandlers['createAccount'] = async ({ body }, { db }) => {
  assertTimeZone(body.time_zone, 'body.time_zone');
  try {
    const row = await insertAccount(db, {
      email: body.email,
      password_hash: await hashPassword(body.password),
      nickname: body.nickname,
      first_name: body.first_name,
      time_zone: body.time_zone ?? 'UTC',
      country_code: body.country_code ?? null,
    });
    return { status: 201, body: profileBody(row) };
  } catch (error) {
    throw takenField(error) ?? error;
  }
};

/** A unique violation of the e-mail or nickname index as a 409 that says which one. */
export function takenField(error: unknown) {
  const constraint = violatedConstraint(error);
  if (constraint === 'users_email_lower_unique') return problems.conflict('An account with this e-mail exists already.');
  if (constraint === 'users_nickname_lower_unique') return problems.conflict('This nickname is taken.');
  return undefined;
}
