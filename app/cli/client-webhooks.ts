// clients webhook set|show|rotate|remove: an app's one webhook endpoint (the GitHub App model), set by the operator.
// It receives the events of every student whose live grant to the app holds the read scope of the event's resource
// (services/webhooks/ fans them out). Its signing secret is printed once, as the last line of stdout, when it is made
// (set on an app without an endpoint, rotate) and stored only sealed.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Db } from '../../db/connect.ts';
import { findClient } from '../../db/queries/oauth.ts';
import {
  deleteEndpoint,
  findClientEndpoint,
  insertEndpoint,
  updateEndpoint,
  type EndpointRow,
} from '../../db/queries/webhooks.ts';
import { endpointStatus } from '../../services/webhooks/endpoint-body.ts';
import { rotateSecret } from '../../services/webhooks/endpoints.ts';
import { bundledSpecFile } from '../../server/contract/bundled-specs.ts';
import { loadConfig } from '../config.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { secretsKeyFor } from '../secrets-key.ts';
import { createWebhookSecret, sealEndpointSecret } from '../../services/webhooks/secrets.ts';
import { assertDeliverableUrl, UndeliverableUrlError } from '../../services/webhooks/target-address.ts';
import { note, parse, print, UsageError, withDb } from './shared.ts';

/** The kinds an app can subscribe to: the spec's catalog but the test kind, which its owner sends on request. */
const APP_EVENT_TYPES: readonly string[] = (
  JSON.parse(readFileSync(bundledSpecFile('general'), 'utf8')).components.schemas.EventType.enum as string[]
).filter((type) => type !== 'webhook.test');

export async function setClientWebhook(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' } },
    ['CLIENT_ID'],
  );
  const clientId = positionals[0]!;
  if (!values.url) throw new UsageError('--url URL is required');
  const eventTypes = values.events ? [...new Set(values.events.split(/[\s,]+/).filter(Boolean))] : [...APP_EVENT_TYPES];
  const unknown = eventTypes.filter((type) => !APP_EVENT_TYPES.includes(type));
  if (unknown.length > 0 || eventTypes.length === 0)
    throw new UsageError(
      `--events takes kinds among ${APP_EVENT_TYPES.join(' ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`,
    );
  const config = loadConfig();
  try {
    await assertDeliverableUrl(values.url, { allowPrivate: config.webhooks.allowPrivateTargets });
  } catch (error) {
    if (error instanceof UndeliverableUrlError) throw new UsageError(`--url ${error.message} (${error.code})`);
    throw error;
  }
  const box = secretBox(secretsKeyFor(config));
  const { endpoint, secret } = await withDb(async (db) =>
    db.transaction().execute(async (trx) => {
      await assertClientExists(trx, clientId);
      const fields = {
        url: values.url!,
        event_types: eventTypes,
        ...(values.description !== undefined ? { description: values.description } : {}),
      };
      const existing = await findClientEndpoint(trx, clientId);
      const now = new Date();
      if (existing)
        return {
          endpoint: (await updateEndpoint(trx, { client_id: clientId }, existing.id, fields, now))!,
          secret: undefined,
        };
      const id = randomUUID();
      const secret = createWebhookSecret();
      const endpoint = await insertEndpoint(
        trx,
        { client_id: clientId },
        { id, description: '', enabled: true, ...fields, secret_sealed: sealEndpointSecret(box, id, secret) },
        now,
      );
      return { endpoint, secret };
    }),
  );
  note(`${secret ? 'set' : 'changed'} the webhook endpoint of client ${clientId}\n`);
  print(describe(endpoint));
  if (secret) {
    note('its signing secret is shown once, below; it is stored only encrypted\n');
    print(secret);
  } else {
    note(`its signing secret is unchanged (npm run cli -- clients webhook rotate ${clientId} makes a new one)\n`);
  }
}

export async function showClientWebhook(args: string[]): Promise<void> {
  const clientId = parse(args, {}, ['CLIENT_ID']).positionals[0]!;
  const endpoint = await withDb((db) => clientEndpoint(db, clientId));
  print(describe(endpoint));
}

export async function rotateClientWebhook(args: string[]): Promise<void> {
  const clientId = parse(args, {}, ['CLIENT_ID']).positionals[0]!;
  const box = secretBox(secretsKeyFor(loadConfig()));
  const { row, secret } = await withDb(async (db) => {
    const endpoint = await clientEndpoint(db, clientId);
    return rotateSecret(db, box, { client_id: clientId }, endpoint.id, new Date());
  });
  if (!row) throw new Error(`client ${clientId} has no webhook endpoint`); // removed meanwhile
  note(
    `new signing secret below, shown once; the previous one also signs until ${row.previous_secret_expires_at!.toISOString()}\n`,
  );
  print(secret);
}

export async function removeClientWebhook(args: string[]): Promise<void> {
  const clientId = parse(args, {}, ['CLIENT_ID']).positionals[0]!;
  await withDb(async (db) => {
    const endpoint = await clientEndpoint(db, clientId);
    await deleteEndpoint(db, { client_id: clientId }, endpoint.id);
  });
  print(`removed the webhook endpoint of client ${clientId}; nothing more is sent to it`);
}

async function clientEndpoint(db: Db, clientId: string): Promise<EndpointRow> {
  await assertClientExists(db, clientId);
  const endpoint = await findClientEndpoint(db, clientId);
  if (!endpoint)
    throw new Error(
      `client ${clientId} has no webhook endpoint (set one with: npm run cli -- clients webhook set ${clientId} --url URL)`,
    );
  return endpoint;
}

async function assertClientExists(db: Db, clientId: string): Promise<void> {
  if (!(await findClient(db, clientId))) throw new Error(`no OAuth client has the id ${clientId}`);
}

function describe(endpoint: EndpointRow): string {
  return [
    `endpoint      ${endpoint.id}`,
    `url           ${endpoint.url}`,
    `events        ${endpoint.event_types.join(' ')}`,
    `status        ${endpointStatus(endpoint)}${endpoint.failing_since ? ` (failing since ${endpoint.failing_since.toISOString()})` : ''}`,
    ...(endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > new Date()
      ? [`previous secret signs until ${endpoint.previous_secret_expires_at.toISOString()}`]
      : []),
  ].join('\n');
}
