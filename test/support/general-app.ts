// A general-surface app on the shared test database, and students to call it: each one a real account created
// through POST /api/accounts, signed in through the real OAuth flow (authorization code + PKCE) with the scopes
// asked for.
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../server/auth/principal.ts';
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { contractClient } from './contract.ts';
import { signIn, registerTestClient } from './oauth-flow.ts';
import { buildApp } from './partner-app.ts';
import { testDatabase } from './root-hooks.ts';


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
  return { app, api, db: testDatabase().db, newStudent: (options: StudentOptions = {}) => newStudent(app, options) };
}

export async function newStudent(app: App, options: StudentOptions = {}): Promise<Student> {
  const nickname = `s_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const email = `${nickname}@example.com`;
  const password = `pw-${randomUUID()}`;
  const created = await contractClient(app)
    .post('/api/accounts')
    .send({ email, password, nickname, first_name: 'Test', time_zone: options.time_zone ?? 'UTC', ...(options.country_code ? { country_code: options.country_code } : {}) })
    .expect(201);
  const tokens = await signIn(app, { client_id: await testClientId(), email, password, scope: (options.scopes ?? ALL_SCOPES).join(' ') });
  const token = tokens.access_token;
  return { id: created.body.id, email, password, nickname, token, refresh_token: tokens.refresh_token, headers: { authorization: `Bearer ${token}` } };
}

let testClient: Promise<{ client_id: string }> | undefined;
/** One public client for the run, allowed every scope; each student narrows it at sign-in. */
function testClientId(): Promise<string> {
  testClient ??= registerTestClient([...ALL_SCOPES]);
  return testClient.then((c) => c.client_id);
}
