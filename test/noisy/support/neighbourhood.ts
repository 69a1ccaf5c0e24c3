// What every noisy-neighbour scenario starts from: the fault suite's throwaway database on the real PostgreSQL, whose
// demo student (on a contract plan, so its own limits never interfere) is the victim, with the partner key; an
// attacker on the free plan with a personal key holding every scope (the key a thief holds, or the one the student
// mints for a script); and the real server as a process on the real Redis, under a key prefix of its own, with its
// metrics port open so that a scenario can read what the server itself counts (streams open, pool waiting).
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { insertPersonalKey } from '../../../db/queries/personal-api-keys.ts';
import { createAccount } from '../../../server/auth/accounts.ts';
import { insertWithFreshKey } from '../../../server/auth/api-keys.ts';
import { ALL_SCOPES } from '../../../server/auth/scopes.ts';
import { faultDatabase, requiredEnv, type FaultDatabase } from '../../faults/support/fixture.ts';
import { startServerProcess, type ServerProcess } from '../../support/server-process.ts';

/** The free plan's per-minute request limit, documented in docs/limits.md; every attack is budgeted against it. */
export const FREE_PER_MINUTE = 60;

export interface AttackerAccount {
  id: string;
  email: string;
  password: string;
  /** A personal key of every scope. */
  key: string;
}

export interface Neighbourhood {
  base: string;
  database: FaultDatabase;
  server: ServerProcess;
  victim: { id: string; key: string; partnerKey: string };
  attacker: AttackerAccount;
  /** The sum of a Prometheus series of the server (every label set), or undefined when it has none. */
  metric(name: string): Promise<number | undefined>;
  /**
   * Ends the attacker's current per-minute window, as the passing of a minute would: for a scenario that stands for
   * more than one minute of a free account's budget (the minute window is fixed from its first request and keyed
   * `<prefix>general:minute:<account id>`). Throws when there is no such window, so a renamed key fails loudly
   * rather than leaving the attacker refused by the limiter.
   */
  nextMinute(): Promise<void>;
  close(): Promise<void>;
}

export interface NeighbourhoodOptions {
  /** Environment of the server process, besides the database, Redis and metrics. */
  env?: Record<string, string>;
  /** Runs on the database before the server starts (data seeded directly, outside the attacker's budget). */
  prepare?: (database: FaultDatabase, attacker: AttackerAccount) => Promise<void>;
}

export async function neighbourhood(name: string, options: NeighbourhoodOptions = {}): Promise<Neighbourhood> {
  const redisUrl = requiredEnv('REDIS_URL');
  const database = await faultDatabase(`sc_noisy_${name}`);
  const redis = createClient({ url: redisUrl });
  let server: ServerProcess | undefined;
  try {
    await redis.connect();
    const attacker = await attackerAccount(database);
    await options.prepare?.(database, attacker);
    const keyPrefix = `noisy-${randomBytes(4).toString('hex')}:`;
    server = startServerProcess({
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: keyPrefix,
      METRICS_PORT: '0',
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...options.env,
    });
    const started = server;
    const base = await started.listening;
    const metricsUrl = (await started.waitFor(/metrics \(Prometheus\): (\S+)/))[1]!;
    return {
      base,
      database,
      server: started,
      victim: { id: database.studentId, key: database.studentKey, partnerKey: database.partnerKey },
      attacker,
      async metric(series) {
        const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
        const values = [...text.matchAll(new RegExp(`^${series}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].map((m) =>
          Number(m[1]),
        );
        return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
      },
      async nextMinute() {
        const key = `${keyPrefix}general:minute:${attacker.id}`;
        if ((await redis.del(key)) !== 1)
          throw new Error(`no per-minute window of the attacker at ${key}: has the limiter's key changed?`);
      },
      async close() {
        if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
        await started.exited;
        for await (const keys of redis.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 500 }))
          if (keys.length > 0) await redis.del(keys);
        await redis.quit();
        await database.drop();
      },
    };
  } catch (error) {
    server?.child.kill('SIGKILL');
    if (redis.isOpen) await redis.quit();
    await database.drop();
    throw error;
  }
}

async function attackerAccount(database: FaultDatabase): Promise<AttackerAccount> {
  const nickname = `attacker_${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('base64url')}`;
  const account = await createAccount(database.db, {
    email: `${nickname}@example.com`,
    nickname,
    first_name: 'Mallory',
    password,
    time_zone: 'UTC',
    country_code: null,
  });
  return { id: account.id, email: account.email, password, key: await personalKeyOf(database, account.id) };
}

/** A personal key of every scope for the account (the one a student mints for a script), made in the database. */
export async function personalKeyOf(database: FaultDatabase, userId: string): Promise<string> {
  const { key } = await insertWithFreshKey(({ prefix, hash }) =>
    insertPersonalKey(database.db, {
      user_id: userId,
      prefix,
      key_hash: hash,
      name: 'noisy neighbour',
      scopes: [...ALL_SCOPES],
    }),
  );
  return key;
}
