// A general-surface app on the shared test database, and students to call it. `newStudent` makes the account and
// its sign-in directly, through the functions POST /api/accounts and the OAuth server store them with
// (minted-sign-in.ts), every such student with one password hashed once per run; `newStudentThroughOAuth` makes
// them over HTTP, POST /api/accounts then the real OAuth flow (authorization code + PKCE), for the tests whose
// subject is the account, the sign-in or what ends it.
import { randomUUID } from 'node:crypto';
import { insertAccount } from '../../db/queries/profile.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import type { Scope } from '../../server/auth/principal.ts';
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { contractClient } from './contract.ts';
import { mintSignIn } from './minted-sign-in.ts';
import { signIn, registerTestClient } from './oauth-flow.ts';
import { buildApp, builtAppParts } from './partner-app.ts';
import { testDatabase } from './shared-database.ts';

export interface Student {
  id: string;
  email: string;
  password: string;
  nickname: string;
  /** `Authorization: Bearer <access token>`, ready for `.set(student.headers)`. */
  headers: { authorization: string };
  token: string;
  refresh_token: string;
}

export interface StudentOptions {
  scopes?: Scope[];
  time_zone?: string;
  country_code?: string;
}

export type App = Awaited<ReturnType<typeof buildApp>>;

/** `options` as for buildApp, e.g. `allowPrivateWebhookTargets` for a webhook receiver on loopback. */
export async function generalApp(options: Parameters<typeof buildApp>[0] = {}) {
  const app = await buildApp(options);
  const api = contractClient(app);
  return {
    app,
    api,
    db: testDatabase().db,
    newStudent: (options: StudentOptions = {}) => newStudent(app, options),
    newStudentThroughOAuth: (options: StudentOptions = {}) => newStudentThroughOAuth(app, options),
  };
}

/** A student signed in to the test client, made in `app`'s database without HTTP: rows and tokens as a real sign-in leaves. */
export async function newStudent(app: App, options: StudentOptions = {}): Promise<Student> {
  const parts = builtAppParts(app);
  const { nickname, email } = newIdentity();
  const account = await insertAccount(parts.db, {
    email,
    nickname,
    first_name: 'Test',
    time_zone: options.time_zone ?? 'UTC',
    country_code: options.country_code ?? null,
    password_hash: await sharedPasswordHash(),
  });
  const tokens = await mintSignIn(parts, {
    client_id: await testClientId(),
    user_id: account.id,
    scopes: options.scopes ?? ALL_SCOPES,
  });
  return student(account.id, { nickname, email, password: SHARED_PASSWORD }, tokens);
}

/** A student created through POST /api/accounts and signed in through /oauth/authorize and /oauth/token. */
export async function newStudentThroughOAuth(app: App, options: StudentOptions = {}): Promise<Student> {
  const { nickname, email } = newIdentity();
  const password = `pw-${randomUUID()}`;
  const created = await contractClient(app)
    .post('/api/accounts')
    .send({
      email,
      password,
      nickname,
      first_name: 'Test',
      time_zone: options.time_zone ?? 'UTC',
      ...(options.country_code ? { country_code: options.country_code } : {}),
    })
    .expect(201);
  const tokens = await signIn(app, {
    client_id: await testClientId(),
    email,
    password,
    scope: (options.scopes ?? ALL_SCOPES).join(' '),
  });
  return student(created.body.id, { nickname, email, password }, tokens);
}

function newIdentity() {
  const nickname = `s_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  return { nickname, email: `${nickname}@example.com` };
}

function student(
  id: string,
  identity: { nickname: string; email: string; password: string },
  tokens: { access_token: string; refresh_token: string },
): Student {
  const token = tokens.access_token;
  return { id, ...identity, token, refresh_token: tokens.refresh_token, headers: { authorization: `Bearer ${token}` } };
}

/** The password of every student `newStudent` makes: Argon2 is slow by design, so it is hashed once per run. */
const SHARED_PASSWORD = `pw-${randomUUID()}`;
let sharedHash: Promise<string> | undefined;
function sharedPasswordHash(): Promise<string> {
  sharedHash ??= hashPassword(SHARED_PASSWORD);
  return sharedHash;
}

let testClient: Promise<{ client_id: string }> | undefined;
/** One public client for the run, allowed every scope; each student narrows it at sign-in. */
function testClientId(): Promise<string> {
  testClient ??= registerTestClient([...ALL_SCOPES]);
  return testClient.then((c) => c.client_id);
}
