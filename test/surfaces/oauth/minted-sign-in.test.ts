// Most tests' students sign in without HTTP (test/support/minted-sign-in.ts). This holds that shortcut to the real
// thing: side by side with a student who signed in through /oauth/authorize and /oauth/token, a minted student has
// the same rows (grant, used authorization code, refresh token) and an access token with the same claims, and its
// credentials work as real ones do: the refresh token rotates, the password signs in, the sign-in counts as fresh.
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Db } from '../../../db/connect.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { refresh, signIn } from '../../support/oauth-flow.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A value as the comparison sees it: what differs between any two sign-ins (ids, hashes, instants) by its kind only. */
function kindOf(value: unknown): unknown {
  if (value instanceof Date) return 'an instant';
  if (typeof value === 'string' && UUID.test(value)) return 'a uuid';
  if (typeof value === 'string' && /^[0-9a-f]{64}$/.test(value)) return 'a SHA-256 hash';
  if (typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value)) return 'a PKCE S256 challenge';
  return value;
}

const kinds = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([column, value]) => [column, kindOf(value)]));
const minutesBetween = (from: Date, to: Date) => Math.round((to.getTime() - from.getTime()) / 60_000);

/** Everything the student's one sign-in left: its rows, lifetimes and token, each by kind where it must differ. */
async function signInOf(db: Db, student: Student) {
  const grant = await db
    .selectFrom('oauth_grants')
    .selectAll()
    .where('user_id', '=', student.id)
    .executeTakeFirstOrThrow();
  const codes = await db.selectFrom('oauth_authorization_codes').selectAll().where('grant_id', '=', grant.id).execute();
  const refreshTokens = await db
    .selectFrom('oauth_refresh_tokens')
    .selectAll()
    .where('grant_id', '=', grant.id)
    .execute();
  const { iat, exp, ...claims } = decodeJwt(student.token);
  return {
    grant: kinds(grant),
    codes: codes.map((code) => ({
      ...kinds(code),
      lifetime_minutes: minutesBetween(grant.created_at, code.expires_at),
    })),
    refresh_tokens: refreshTokens.map((token) => ({
      ...kinds(token),
      lifetime_minutes: minutesBetween(token.created_at, token.expires_at),
    })),
    token: {
      header: decodeProtectedHeader(student.token),
      claims: { ...kinds(claims), lifetime_seconds: exp! - iat! },
    },
  };
}

describe('a minted sign-in (the students most tests use)', () => {
  let context: Awaited<ReturnType<typeof generalApp>>;
  before(async () => {
    context = await generalApp();
  });

  it('leaves the rows and the access token a sign-in through the OAuth endpoints leaves', async () => {
    const scopes = ['profile:read', 'tasks:write'] as const;
    const minted = await context.newStudent({ scopes: [...scopes] });
    const real = await context.newStudentThroughOAuth({ scopes: [...scopes] });
    const [mintedSignIn, realSignIn] = [await signInOf(context.db, minted), await signInOf(context.db, real)];
    assert.deepEqual(mintedSignIn, realSignIn);
    // Not only alike, but right: one grant of the scopes asked for, whose one code was used, and a live refresh token.
    assert.deepEqual(realSignIn.grant.scopes, scopes);
    const [code, refreshToken] = [
      realSignIn.codes[0] as Record<string, unknown>,
      realSignIn.refresh_tokens[0] as Record<string, unknown>,
    ];
    assert.deepEqual(
      [realSignIn.codes.length, code.used_at, realSignIn.refresh_tokens.length, refreshToken.rotated_at],
      [1, 'an instant', 1, null],
    );
    assert.equal(decodeJwt(minted.token).sub, minted.id);
  });

  it('gives credentials that work as real ones do: the refresh token rotates, the password signs in, the sign-in is fresh', async () => {
    const minted = await context.newStudent({ scopes: ['profile:read'] });
    const grant = await context.db
      .selectFrom('oauth_grants')
      .select(['client_id', 'authenticated_at'])
      .where('user_id', '=', minted.id)
      .executeTakeFirstOrThrow();
    assert.ok(
      grant.authenticated_at && Date.now() - grant.authenticated_at.getTime() < 60_000,
      'signed in just now, as deleting the account needs',
    );

    await context.api.get('/api/users/me').set(minted.headers).expect(200);
    const rotated = (
      await refresh(context.app, { client_id: grant.client_id, refresh_token: minted.refresh_token }).expect(200)
    ).body;
    await context.api
      .get('/api/users/me')
      .set({ authorization: `Bearer ${rotated.access_token}` })
      .expect(200);
    await refresh(context.app, { client_id: grant.client_id, refresh_token: minted.refresh_token }).expect(400);

    const again = await signIn(context.app, {
      client_id: grant.client_id,
      email: minted.email,
      password: minted.password,
      scope: 'profile:read',
    });
    await context.api
      .get('/api/users/me')
      .set({ authorization: `Bearer ${again.access_token}` })
      .expect(200);
  });
});
