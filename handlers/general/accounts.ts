import { AccountTaken, createAccount as insertNewAccount } from '../../server/auth/accounts.ts';
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
