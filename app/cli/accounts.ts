// users create | users reset-password | users key | clients create: student accounts and OAuth clients, for operators.
// Secrets (a generated password, a client secret) are printed once, as the last lines of stdout, and stored only as
// hashes.
import { sql } from 'kysely';
import { insertPersonalKey } from '../../db/queries/personal-api-keys.ts';
import { findNamedAccount } from '../../db/queries/users.ts';
import { replacePassword } from '../../services/accounts/replace-password.ts';
import { knownTimeZone } from '../../services/accounts/time-zones.ts';
import { AccountTaken, createAccount, generatePassword } from '../../server/auth/accounts.ts';
import { insertWithFreshKey } from '../../server/auth/api-keys.ts';
import { registerClient } from '../../server/oauth/clients.ts';
import { redirectUrisOption, scopesOption } from './client-options.ts';
import { accountByEmail } from './plans.ts';
import { note, parse, print, printable, UsageError, withDb } from './shared.ts';

export async function createUser(args: string[]): Promise<void> {
  const { values } = parse(args, {
    email: { type: 'string' },
    nickname: { type: 'string' },
    'first-name': { type: 'string' },
    'time-zone': { type: 'string' },
    country: { type: 'string' },
  });
  const { email, nickname } = values;
  if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError('--email ADDRESS is required');
  if (!nickname || !/^[A-Za-z0-9_]{3,30}$/.test(nickname))
    throw new UsageError('--nickname is required: 3 to 30 letters, digits or underscores');
  const country = values.country?.toLowerCase();
  if (country !== undefined && !/^[a-z]{2}$/.test(country))
    throw new UsageError('--country is an ISO alpha-2 code such as KZ');
  const timeZone = values['time-zone'] ?? 'UTC';
  // The password is generated, never taken on the command line, where shell history would keep it.
  const password = generatePassword();
  const account = await withDb(async (db) => {
    if (!(await knownTimeZone(db, timeZone)))
      throw new UsageError(`--time-zone must be an IANA zone such as Asia/Almaty, got ${JSON.stringify(timeZone)}`);
    return createAccount(db, {
      email,
      nickname,
      first_name: values['first-name'] ?? nickname,
      password,
      time_zone: timeZone,
      country_code: country ?? null,
    }).catch((error) => {
      throw error instanceof AccountTaken ? new Error(error.message) : error;
    });
  });
  note(`created account ${account.id} (${account.email}, ${account.nickname}); its password is shown once, below\n`);
  print(password);
}

/**
 * A student who lost their password gets a generated one from an operator. Every sign-in ends with all it owns, as
 * after a password change (whoever knew the old password keeps nothing); the student's own personal keys are kept. The
 * new password is not forced to change: no step of the service could force it (the sign-in page serves whichever
 * app the student uses), so the operator hands it over by a channel they trust and the student changes it with
 * POST /api/users/me/password.
 */
export async function resetPassword(args: string[]): Promise<void> {
  const { positionals } = parse(args, {}, ['EMAIL']);
  const email = positionals[0]!;
  const password = generatePassword();
  await withDb(async (db) => {
    const account = await findNamedAccount(db, { email });
    if (!account) throw new Error(`no account has the e-mail ${email}`);
    await replacePassword(db, account.id, password, { keptGrantId: null, reason: 'password_reset', at: new Date() });
  });
  note(
    `reset the password of ${email}; every sign-in of the account has ended. The new password is shown once, below\n`,
  );
  print(password);
}

export async function createClient(args: string[]): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    confidential: { type: 'boolean' },
    owner: { type: 'string' },
    scopes: { type: 'string' },
  });
  const name = values.name?.trim();
  if (!name) throw new UsageError('--name NAME is required (students see it on the sign-in page)');
  const redirectUris = redirectUrisOption(values['redirect-uri']);
  const scopes = scopesOption(values.scopes);
  if (values.owner && !values.confidential)
    throw new UsageError('--owner needs --confidential: client credentials require a client secret');
  if (redirectUris.length === 0 && !values.owner)
    throw new UsageError(
      'give at least one --redirect-uri (authorization code), or --confidential --owner EMAIL (client credentials)',
    );

  const client = await withDb(async (db) => {
    let ownerId: string | undefined;
    if (values.owner) {
      const owner = await db
        .selectFrom('users')
        .select('id')
        .where(sql`lower(email)`, '=', values.owner.toLowerCase())
        .executeTakeFirst();
      if (!owner) throw new Error(`no account has the e-mail ${values.owner}`);
      ownerId = owner.id;
    }
    return registerClient(db, {
      name,
      redirect_uris: redirectUris,
      scopes,
      confidential: Boolean(values.confidential),
      ...(ownerId ? { owner_user_id: ownerId } : {}),
    });
  });
  note(
    `registered ${values.confidential ? 'confidential' : 'public'} client "${name}" with scopes ${scopes.join(' ')}\n` +
      (client.client_secret
        ? 'client_id and client_secret below; the secret is shown once and stored only as a hash\n'
        : 'client_id below; a public client uses PKCE and has no secret\n'),
  );
  print(client.client_id);
  if (client.client_secret) print(client.client_secret);
}

/**
 * users key EMAIL [--name NAME] [--scopes "a b"]: a personal API key of the student, as POST /api/users/me/api-keys
 * makes one, for a student who cannot sign in yet (a script, a demo). By default every scope but keys:manage, as a key
 * the API mints cannot mint keys. An own key (no grant): it ends when the student revokes it or the account goes.
 */
export async function createPersonalKey(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { name: { type: 'string' }, scopes: { type: 'string' } }, ['EMAIL']);
  const email = positionals[0]!;
  const name = (values.name ?? 'key made by the operator').trim();
  if (name.length < 1 || name.length > 100) throw new UsageError('--name must be 1 to 100 characters');
  const scopes =
    values.scopes === undefined
      ? scopesOption(undefined).filter((scope) => scope !== 'keys:manage')
      : scopesOption(values.scopes);
  const { key, record } = await withDb(async (db) => {
    const account = await accountByEmail(db, email);
    return insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(db, { user_id: account.id, prefix, key_hash: hash, name, scopes }),
    );
  });
  // The summary goes to stderr so that stdout is the key alone, as for keys create.
  note(
    `created personal key ${record.prefix} "${printable(name)}" of ${email}: ${scopes.join(' ')}\nthe key is shown once, below, and stored only as a hash: store it now\n`,
  );
  print(key);
}
