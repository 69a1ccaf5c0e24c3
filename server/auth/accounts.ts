// Creating a student account outside the HTTP API: the operator CLI (`users create`) and the demo student of the first
// embedded start (app/demo-student.ts). Same rules as POST /api/accounts: Argon2id hash, unique e-mail and nickname.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { violatedConstraint } from '../../db/errors.ts';
import { insertAccount, type NewAccountRow, type ProfileRow } from '../../db/queries/profile.ts';
import { hashPassword } from './passwords.ts';

export class AccountTaken extends Error {}

/** A password of 16 random base64url characters (96 bits), for accounts an operator creates without one. */
export function generatePassword(): string {
  return randomBytes(12).toString('base64url');
}

export async function createAccount(
  db: Db,
  account: Omit<NewAccountRow, 'password_hash'> & { password: string },
): Promise<ProfileRow> {
  const { password, ...fields } = account;
  try {
    return await insertAccount(db, { ...fields, password_hash: await hashPassword(password) });
  } catch (error) {
    const constraint = violatedConstraint(error);
    if (constraint === 'users_email_lower_unique')
      throw new AccountTaken(`an account with the e-mail ${account.email} exists already`);
    if (constraint === 'users_nickname_lower_unique')
      throw new AccountTaken(`the nickname ${account.nickname} is taken`);
    throw error;
  }
}
