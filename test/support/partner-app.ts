// A partner-surface app on the shared test database, with its own in-memory limit counters, and a key for it.
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import type { Tutor } from '../../services/ai/tutor/types.ts';
import type { AiQueue } from '../../services/ai/queue.ts';
import type { ExportLimits } from '../../services/exports/export-limits.ts';
import { createApp } from '../../app/app.ts';
import { notificationsFor, type Notifications } from '../../db/notifications.ts';
import type { StreamSettings } from '../../services/streams/stream-settings.ts';
import { accessTokenIssuer, type AccessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { loadSigningKey } from '../../server/auth/signing-keys.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import type { Lifecycle } from '../../server/process/lifecycle.ts';
import { secretBox, SECRETS_KEY_BYTES } from '../../server/auth/secret-box.ts';
import { memoryLimitStores, type LimitStores } from '../../server/limits/rate-limits.ts';
import { contractClient } from './contract.ts';
import { testDatabase } from './shared-database.ts';
import { TEST_PAYMENT_PROVIDER_SECRET } from './payment-provider.ts';
import { runState } from './run-state.ts';

export const TEST_ISSUER = 'http://127.0.0.1:3000';

let testTokens: Promise<AccessTokenIssuer> | undefined;
/** One signing key per test run, as one process has in production. */
export function testTokenIssuer(): Promise<AccessTokenIssuer> {
  testTokens ??= loadSigningKey(undefined).then((key) =>
    accessTokenIssuer(key, { issuer: TEST_ISSUER, now: () => new Date() }),
  );
  return testTokens;
}

/** The notification path of the run's database, one for the whole run as one process has one. */
export function testNotifications(): Notifications {
  const { db, url } = testDatabase();
  runState.notifications ??= notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
  return runState.notifications;
}

/**
 * Readiness streams of test apps end after 100 ms, so that tests which call every operation (documented statuses,
 * properties, examples) read a whole response; the stream's own tests choose their settings.
 */
const SHORT_STREAMS: StreamSettings = { heartbeatMs: 15_000, maxDurationMs: 100 };

/** One secrets key per test run, as one process has on an in-memory database. */
export const testSecrets = secretBox(randomBytes(SECRETS_KEY_BYTES));

export function testWebhookSettings(allowPrivateTargets = false) {
  return { secrets: testSecrets, targets: { allowPrivate: allowPrivateTargets } };
}

/**
 * `db` replaces the shared test database, e.g. with one that fails, to see how the app answers then; `lifecycle`
 * lets a test stop it; `allowPrivateWebhookTargets` lets webhook endpoints point at a receiver on loopback;
 * `paymentProviderSecret`: null for an app without one; absent, the tests' secret (test/support/payment-provider.ts);
 * `notifications`: the app's own notification path (a second process's), for caches kept per process.
 */
export async function buildApp(
  options: {
    limitStores?: LimitStores;
    logger?: Logger;
    tokens?: AccessTokenIssuer;
    db?: Db;
    tutor?: Tutor;
    aiQueue?: AiQueue;
    /** The account export's bounds; absent: the process's defaults. */
    exports?: ExportLimits;
    lifecycle?: Lifecycle;
    streamSettings?: StreamSettings;
    paymentProviderSecret?: string | null;
    allowPrivateWebhookTargets?: boolean;
    /** Its own notification path, as a second process has; absent: the run's one. */
    notifications?: Notifications;
    /** TRUST_PROXY: behind a proxy it trusts, a request comes from the address its X-Forwarded-For names. */
    trustProxy?: boolean | number;
    /** CORS_ORIGINS: the origins whose pages may call the API surfaces; absent: none. */
    corsOrigins?: string[];
  } = {},
) {
  const paymentProviderSecret =
    options.paymentProviderSecret === undefined ? TEST_PAYMENT_PROVIDER_SECRET : options.paymentProviderSecret;
  const db = options.db ?? testDatabase().db;
  const tokens = options.tokens ?? (await testTokenIssuer());
  const app = await createApp({
    db,
    logger: options.logger ?? pino({ level: 'silent' }),
    limitStores: options.limitStores ?? memoryLimitStores(),
    tokens,
    ...(options.tutor ? { tutor: options.tutor } : {}),
    ...(options.aiQueue ? { aiQueue: options.aiQueue } : {}),
    ...(options.exports ? { exports: options.exports } : {}),
    ...(options.lifecycle ? { lifecycle: options.lifecycle } : {}),
    ...(paymentProviderSecret ? { paymentProviderSecret } : {}),
    notifications: options.notifications ?? testNotifications(),
    streamSettings: options.streamSettings ?? SHORT_STREAMS,
    webhooks: testWebhookSettings(options.allowPrivateWebhookTargets),
    config: {
      bodyLimitBytes: 100 * 1024,
      validateResponses: false,
      trustProxy: options.trustProxy ?? false,
      ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    },
  });
  builtWith.set(app, { db, tokens });
  return app;
}

const builtWith = new WeakMap<object, { db: Db; tokens: AccessTokenIssuer }>();

/** The database and token issuer `app` was built with: where a student made without HTTP goes, and who signs its tokens. */
export function builtAppParts(app: object): { db: Db; tokens: AccessTokenIssuer } {
  const parts = builtWith.get(app);
  if (!parts) throw new Error('the app was not built by buildApp()');
  return parts;
}

export function issueTestKey(limits: { per_minute?: number; per_day?: number } = {}) {
  return issueApiKey(testDatabase().db, { name: 'test key', ...limits });
}

export async function partnerApp(options: { keyLimits?: { per_minute?: number; per_day?: number } } = {}) {
  const app = await buildApp();
  const { key, record } = await issueTestKey(options.keyLimits);
  return { app, db: testDatabase().db, key, record, api: contractClient(app) };
}
