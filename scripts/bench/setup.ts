// The system under test: the real app from createApp on a fresh, migrated and seeded database, listening on
// loopback. Embedded PGlite in memory by default; with DATABASE_URL a throwaway database on that server (created
// here, dropped on close, so nobody's data is touched); with REDIS_URL shared limit counters under a bench-only
// key prefix (deleted on close).
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createClient } from 'redis';
import { connect, describeTarget, type DbTarget } from '../../db/connect.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { insertGrant } from '../../db/queries/oauth.ts';
import { setContractPlan } from '../../db/queries/users.ts';
import { DEMO_SEED, seedDemo, seedReference } from '../../db/seed/index.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { createApp } from '../../server/app.ts';
import { accessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { loadSigningKey } from '../../server/auth/signing-keys.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { createDemoStudent, DEMO_STUDENT } from '../../server/demo-student.ts';
import { ALL_SCOPES } from '../../server/general/scopes.ts';
import { registerClient } from '../../server/oauth/clients.ts';
import { createLogger } from '../../server/logger.ts';
import { memoryLimitStores, redisLimitStores } from '../../server/rate-limits.ts';
import { secretBox, SECRETS_KEY_BYTES } from '../../server/secret-box.ts';

/** Far above any request count a bench reaches, and within the integer columns (max 2,147,483,647). */
const HUGE_LIMIT = 1_000_000_000;

export interface BenchApp {
  baseUrl: string;
  apiKey: string;
  /** An access token of the demo student (15 minutes: longer than a full bench run). */
  studentToken: string;
  engine: 'pglite' | 'postgresql';
  database: string;
  limitStore: string;
  close(): Promise<void>;
}

export async function startBenchApp(env: NodeJS.ProcessEnv = process.env): Promise<BenchApp> {
  const run = randomBytes(6).toString('hex');
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    // Last opened, first closed: the server before the stores and the database it uses.
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error('bench cleanup:', error));
  };

  try {
    let target: DbTarget = { dataDir: 'memory://' };
    if (env.DATABASE_URL) {
      const throwaway = await createThrowawayDatabase(env.DATABASE_URL, 'bench');
      cleanups.push(() => throwaway.drop());
      target = { databaseUrl: throwaway.url };
    }
    const db = connect(target);
    cleanups.push(() => db.destroy());
    await migrateToLatest(db);
    const now = new Date();
    await seedReference(db, { now });
    await seedDemo(db, { seed: DEMO_SEED, now });
    const { key } = await issueApiKey(db, { name: 'bench', per_minute: HUGE_LIMIT, per_day: HUGE_LIMIT });
    // The demo student, with its tasks, decks and exams, on a contract plan whose limits the bench never reaches.
    await createDemoStudent(db, now);
    const studentId = (await setContractPlan(db, DEMO_STUDENT.email, { per_minute: HUGE_LIMIT, per_day: HUGE_LIMIT, ai_per_hour: HUGE_LIMIT }))!;
    // A grant as the token endpoint records one; the bench then holds the access token it would issue.
    const { client_id } = await registerClient(db, { name: 'bench', redirect_uris: ['http://127.0.0.1/callback'], scopes: [...ALL_SCOPES], confidential: false });
    const grantId = await insertGrant(db, { client_id, user_id: studentId, scopes: [...ALL_SCOPES] });

    const redisUrl = env.REDIS_URL;
    const keyPrefix = `rl:bench:${run}:`;
    const limitStores = redisUrl ? await redisLimitStores(redisUrl, { keyPrefix }) : memoryLimitStores();
    cleanups.push(() => limitStores.close());
    if (redisUrl) cleanups.push(() => deleteRedisKeys(redisUrl, keyPrefix));

    // Production logs every request, so the bench pays for it too: the real logger at 'info', written nowhere.
    const nullSink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    const logger = createLogger('info', nullSink);
    const tokens = accessTokenIssuer(await loadSigningKey(undefined), { issuer: 'http://127.0.0.1', now: () => new Date() });
    const { token: studentToken } = await tokens.issue({ user_id: studentId, client_id, scopes: ALL_SCOPES, grant_id: grantId });
    const app = await createApp({
      db,
      logger,
      limitStores,
      tokens,
      webhooks: { secrets: secretBox(randomBytes(SECRETS_KEY_BYTES)), targets: { allowPrivate: false } },
      config: { bodyLimitBytes: 100 * 1024, validateResponses: false, trustProxy: false },
    });
    const server = await listen(app.listen.bind(app));
    cleanups.push(() => stop(server));

    const { port } = server.address() as AddressInfo;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: key,
      studentToken,
      engine: env.DATABASE_URL ? 'postgresql' : 'pglite',
      database: describeTarget(target),
      limitStore: redisUrl ? `Redis (prefix ${keyPrefix})` : 'in-process memory',
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Listens on loopback only, on a port the OS picks. */
function listen(appListen: (port: number, host: string, callback: () => void) => Server): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = appListen(0, '127.0.0.1', () => resolve(server));
    server.once('error', reject);
  });
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // The load generator has gone; drop its keep-alive sockets instead of waiting for their timeout.
    server.closeAllConnections();
  });
}

/** The day-window counters would otherwise linger in Redis for 24 hours. */
async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    await client.close();
  }
}
