// Creating a student account outside the HTTP API: the operator CLI (`users create`) and the demo data of the
// first embedded start. Same rules as POST /api/accounts: Argon2id hash, unique e-mail and nickname.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { violatedConstraint } from '../../db/errors.ts';
import { insertPersonalKey } from '../../db/queries/personal-api-keys.ts';
import { insertAccount, type NewAccountRow, type ProfileRow } from '../../db/queries/profile.ts';
import { ALL_SCOPES } from '../general/scopes.ts';
import { insertWithFreshKey } from './api-keys.ts';
import { hashPassword } from './passwords.ts';

export class AccountTaken extends Error {}

/** A password of 16 random base64url characters (96 bits), for accounts an operator creates without one. */
export function generatePassword(): string {
  return randomBytes(12).toString('base64url');
}

export async function createAccount(db: Db, account: Omit<NewAccountRow, 'password_hash'> & { password: string }): Promise<ProfileRow> {
  const { password, ...fields } = account;
  try {
    return await insertAccount(db, { ...fields, password_hash: await hashPassword(password) });
  } catch (error) {
    const constraint = violatedConstraint(error);
    if (constraint === 'users_email_lower_unique') throw new AccountTaken(`an account with the e-mail ${account.email} exists already`);
    if (constraint === 'users_nickname_lower_unique') throw new AccountTaken(`the nickname ${account.nickname} is taken`);
    throw error;
  }
}

export const DEMO_STUDENT = { email: 'demo@study-companion.example', nickname: 'demo_student', first_name: 'Demo' } as const;

/** The demo student of a first embedded start, with a personal key holding every scope; both secrets shown once. */
export async function createDemoStudent(db: Db): Promise<{ email: string; password: string; key: string }> {
  const password = generatePassword();
  const student = await createAccount(db, { ...DEMO_STUDENT, password, time_zone: 'Asia/Almaty', country_code: 'kz' });
  const { key } = await insertWithFreshKey(({ prefix, hash }) =>
    insertPersonalKey(db, { user_id: student.id, prefix, key_hash: hash, name: 'demo key (first start)', scopes: [...ALL_SCOPES] }),
  );
  return { email: student.email, password, key };
}
