// A general-surface app on the shared test database, and students to call it: each one a real account created
// through POST /api/accounts, holding an access token with the scopes asked for.
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../server/general/principal.ts';
import { contractClient } from './contract.ts';
import { buildApp, testTokenIssuer } from './partner-app.ts';
import { testDatabase } from './root-hooks.ts';

export const ALL_SCOPES: Scope[] = [
  'profile:read',
  'profile:write',
  'keys:manage',
  'tasks:read',
  'tasks:write',
  'schedule:read',
  'decks:read',
  'decks:write',
  'exams:read',
  'exams:write',
  'today:read',
  'ai:chat',
];

export interface Student {
  id: string;
  email: string;
  password: string;
  nickname: string;
  /** `Authorization: Bearer <access token>`, ready for `.set(student.headers)`. */
  headers: { authorization: string };
  token: string;
}

export interface StudentOptions {
  scopes?: Scope[];
  time_zone?: string;
  country_code?: string;
}

export type App = Awaited<ReturnType<typeof buildApp>>;

export async function generalApp() {
  const app = await buildApp();
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
  const token = await accessTokenFor(created.body.id, options.scopes ?? ALL_SCOPES);
  return { id: created.body.id, email, password, nickname, token, headers: { authorization: `Bearer ${token}` } };
}

/** An access token for a fresh grant of the test client, as the token endpoint would issue it. */
async function accessTokenFor(userId: string, scopes: Scope[]): Promise<string> {
  const db = testDatabase().db;
  await db
    .insertInto('oauth_clients')
    .values({ id: 'test-app', name: 'Test app', redirect_uris: ['http://127.0.0.1/callback'], grants: ['authorization_code', 'refresh_token'], scopes: ALL_SCOPES })
    .onConflict((c) => c.column('id').doNothing())
    .execute();
  const grant = await db.insertInto('oauth_grants').values({ client_id: 'test-app', user_id: userId, scopes }).returning('id').executeTakeFirstOrThrow();
  const { token } = await (await testTokenIssuer()).issue({ user_id: userId, client_id: 'test-app', scopes, grant_id: grant.id });
  return token;
}
