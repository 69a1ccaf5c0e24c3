// Rows the delivery tests start from, written directly (the endpoint API is another module's): a student, an
// endpoint with a sealed secret, an app with a grant, and stored events of every documented kind built from the
// spec's own examples.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../../db/connect.ts';
import { insertClient, insertGrant } from '../../../db/queries/oauth.ts';
import { bundledSpecs } from '../../../server/contract/bundled-specs.ts';
import { emitEvent, type EventType } from '../../../services/events/emit.ts';
import type { SecretBox } from '../../../server/auth/secret-box.ts';
import { createWebhookSecret, sealEndpointSecret } from '../../../services/webhooks/secrets.ts';

export async function insertStudent(db: Db): Promise<string> {
  const nickname = `w_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const row = await db
    .insertInto('users')
    .values({ nickname, first_name: 'Hook', email: `${nickname}@example.com` })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface TestEndpoint {
  id: string;
  secret: string;
}

export async function insertEndpoint(
  db: Db,
  box: SecretBox,
  owner: { user_id: string } | { client_id: string },
  options: { url: string; event_types: string[]; previousSecret?: { secret: string; expires_at: Date } },
): Promise<TestEndpoint> {
  const id = randomUUID();
  const secret = createWebhookSecret();
  await db
    .insertInto('webhook_endpoints')
    .values({
      id,
      user_id: 'user_id' in owner ? owner.user_id : null,
      client_id: 'client_id' in owner ? owner.client_id : null,
      url: options.url,
      event_types: options.event_types,
      disabled_reason: null,
      secret_sealed: sealEndpointSecret(box, id, secret),
      previous_secret_sealed: options.previousSecret
        ? sealEndpointSecret(box, id, options.previousSecret.secret)
        : null,
      previous_secret_expires_at: options.previousSecret?.expires_at ?? null,
    })
    .execute();
  return { id, secret };
}

export async function insertAppWithGrant(
  db: Db,
  userId: string,
  scopes: string[],
): Promise<{ clientId: string; grantId: string }> {
  const clientId = `app_${randomUUID().slice(0, 8)}`;
  await insertClient(db, {
    id: clientId,
    name: 'Hook app',
    secret_hash: null,
    redirect_uris: ['https://app.example.com/cb'],
    grants: ['authorization_code'],
    scopes,
    owner_user_id: null,
  });
  return { clientId, grantId: await insertGrant(db, { client_id: clientId, user_id: userId, scopes }) };
}

/** The spec's example payload of each documented kind. */
export function exampleEvents(): Map<EventType, { data: unknown }> {
  const general = bundledSpecs().find(({ surface }) => surface === 'general')!.definition as unknown as {
    webhooks: Record<
      string,
      {
        post: {
          requestBody: { content: { 'application/json': { examples: Record<string, { value: { data: unknown } }> } } };
        };
      }
    >;
  };
  return new Map(
    Object.entries(general.webhooks).map(([type, op]) => [
      type as EventType,
      Object.values(op.post.requestBody.content['application/json'].examples)[0]!.value,
    ]),
  );
}

/** Stores an event of `type` for the student, with the data of the spec's example of that kind. */
export async function emitExample(db: Db, type: EventType, studentId: string): Promise<string> {
  const example = exampleEvents().get(type)!;
  return db
    .transaction()
    .execute((trx) => emitEvent(trx, { type, studentId, data: example.data as never, at: new Date() }));
}
