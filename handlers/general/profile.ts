import { findProfile, universityExists, updateProfile } from '../../db/queries/profile.ts';
import { insertPersonalKey, listPersonalKeys, revokePersonalKey } from '../../db/queries/personal-api-keys.ts';
import { insertWithFreshKey } from '../../server/auth/api-keys.ts';
import { ALL_SCOPES, requireScopes } from '../../server/auth/scopes.ts';
import { listAuthorizedApps, revokeClientGrants } from '../../db/queries/oauth.ts';
import { idempotently } from '../../server/http/idempotency.ts';
import { problems } from '../../server/http/problems.ts';
import { violatedConstraint } from '../../db/errors.ts';
import { listRecentWarnings } from '../../db/queries/warnings.ts';
import { PROFILE_WARNINGS, profileBody } from '../../services/accounts/profile-body.ts';
import { assertTimeZone } from '../../services/accounts/time-zones.ts';
import type { GeneralHandlers, Schemas } from './types.ts';

export const getMyProfile: GeneralHandlers['getMyProfile'] = async ({ principal }, { db }) => {
  const [row, warnings] = await Promise.all([
    findProfile(db, principal.user_id),
    listRecentWarnings(db, principal.user_id, PROFILE_WARNINGS),
  ]);
  if (!row) throw problems.notFound('This account no longer exists.');
  return { status: 200, body: profileBody(row, warnings) };
};

export const updateMyProfile: GeneralHandlers['updateMyProfile'] = async ({ body, principal }, { db, now }) => {
  await assertTimeZone(db, body.time_zone, 'body.time_zone');
  if (body.university_id && !(await universityExists(db, body.university_id))) {
    throw problems.invalidRequest([{ path: 'body.university_id', message: 'names no university' }]);
  }
  try {
    const row = await updateProfile(db, principal.user_id, body, now());
    if (!row) throw problems.notFound('This account no longer exists.');
    return { status: 200, body: profileBody(row, await listRecentWarnings(db, principal.user_id, PROFILE_WARNINGS)) };
  } catch (error) {
    if (violatedConstraint(error) === 'users_nickname_lower_unique')
      throw problems.conflict(`The nickname ${body.nickname} is taken.`);
    throw error;
  }
};

export const listMyApiKeys: GeneralHandlers['listMyApiKeys'] = async ({ principal }, { db }) => {
  const keys = await listPersonalKeys(db, principal.user_id);
  return { status: 200, body: { data: keys.map(keyBody) } };
};

/**
 * A retry with the same Idempotency-Key answers the same key, as every creating POST replays its first response: a
 * client whose first answer was lost would otherwise hold a working key it can never read, and make another. The
 * response kept for retries holds the key sealed under SECRETS_KEY (as webhook secrets are), never in the clear.
 */
export const createMyApiKey: GeneralHandlers['createMyApiKey'] = async ({ headers, body, principal }, context) => {
  const { db, secrets } = context;
  // A key never grants more than the credential that made it (403 insufficient_scope); by default it cannot mint keys.
  const scopes = body.scopes ?? principal.scopes.filter((scope) => scope !== 'keys:manage');
  requireScopes(principal, scopes);
  // A key minted through an OAuth grant (directly, or by a key that was) ends with that grant.
  const grant_id = principal.credential.grant_id;
  const idempotencyKey = headers['Idempotency-Key'];
  const request = {
    userId: principal.user_id,
    key: idempotencyKey,
    operationId: 'createMyApiKey',
    body,
    now: context.now(),
  };
  const created = await idempotently(db, request, async (trx): Promise<CreatedKey> => {
    const { key, record } = await insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(trx, { user_id: principal.user_id, prefix, key_hash: hash, name: body.name, scopes, grant_id }),
    );
    return { status: 201, body: { ...keyBody(record), key: secrets.seal(key, sealContext(record.id)) } };
  });
  const key = secrets.open(created.body.key, sealContext(created.body.id));
  return { ...created, body: { ...created.body, key }, headers: { ...created.headers, 'Cache-Control': 'no-store' } };
};

type CreatedKey = { status: 201; body: Schemas['CreatedPersonalApiKey']; headers?: Record<string, string> };

const sealContext = (keyId: string) => `personal-api-key:${keyId}`;

export const revokeMyApiKey: GeneralHandlers['revokeMyApiKey'] = async ({ path, principal }, { db, now }) => {
  if (!(await revokePersonalKey(db, principal.user_id, path.key_id, now())))
    throw problems.notFound('You have no active key with this id.');
  return { status: 204, body: undefined };
};

export const listMyAuthorizations: GeneralHandlers['listMyAuthorizations'] = async ({ principal }, { db }) => {
  const apps = await listAuthorizedApps(db, principal.user_id);
  const data = apps.map((app) => ({
    client_id: app.client_id,
    client_name: app.client_name,
    scopes: ALL_SCOPES.filter((scope) => app.scopes.includes(scope)),
    granted_at: new Date(app.granted_at).toISOString(),
    last_used_at: new Date(app.last_used_at).toISOString(),
  }));
  return { status: 200, body: { data } };
};

/** Ends the app's grants; their tokens, the keys minted through them and the app's webhooks for the student stop with them. */
export const revokeMyAuthorization: GeneralHandlers['revokeMyAuthorization'] = async (
  { path, principal },
  { db, now },
) => {
  const revoked = await revokeClientGrants(db, principal.user_id, path.client_id, 'revoked_by_student', now());
  if (revoked === 0) throw problems.notFound('You have not authorized an app with this client id.');
  return { status: 204, body: undefined };
};

function keyBody(row: Awaited<ReturnType<typeof listPersonalKeys>>[number]): Schemas['PersonalApiKey'] {
  return {
    ...row,
    scopes: row.scopes as Schemas['Scope'][],
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}
