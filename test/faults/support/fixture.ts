// What every fault test starts from: the real PostgreSQL and Redis of DATABASE_URL and REDIS_URL (required: the
// suite fails loudly without them), a throwaway database copied from the run's migrated and seeded template
// (template-database.ts), a partner key and a student's personal key with limits the load never reaches, and small
// helpers to load the server and to read its answers.
import assert from 'node:assert/strict';
import { connect, type Db } from '../../../db/connect.ts';
import { setContractPlan } from '../../../db/queries/users.ts';
import { createThrowawayDatabase } from '../../../db/throwaway-database.ts';
import { issueApiKey } from '../../../server/auth/api-keys.ts';
import { secretBox } from '../../../server/auth/secret-box.ts';
import { startServerProcess, TEST_SECRETS_KEY, type ServerProcess } from '../../support/server-process.ts';
import { createDemoStudent, DEMO_STUDENT } from '../../../app/demo-student.ts';

export const ROOMY = 1_000_000;

export function requiredEnv(name: 'DATABASE_URL' | 'REDIS_URL'): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `the fault suite needs ${name} (CI: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379)`,
    );
  return value;
}

/** Names the run's template database, set by mocha's global setup (template-database.ts) for the test processes. */
export const TEMPLATE_DATABASE_VARIABLE = 'SC_FAULT_TEMPLATE_DATABASE';

export interface FaultDatabase {
  url: string;
  name: string;
  db: Db;
  partnerKey: string;
  studentKey: string;
  studentId: string;
  drop(): Promise<void>;
}

/** `namePrefix` names the throwaway database after the file that uses it, for whoever reads pg_stat_activity. */
export async function faultDatabase(namePrefix = 'sc_fault'): Promise<FaultDatabase> {
  const template = process.env[TEMPLATE_DATABASE_VARIABLE];
  if (!template)
    throw new Error(
      `no template database (${TEMPLATE_DATABASE_VARIABLE}): run the file with test/faults/mocharc.json or test/noisy/mocharc.json, whose global setup makes it`,
    );
  const throwaway = await createThrowawayDatabase(requiredEnv('DATABASE_URL'), namePrefix, { template });
  const db = connect({ databaseUrl: throwaway.url });
  const now = new Date();
  const { key: partnerKey } = await issueApiKey(db, { name: 'fault suite', per_minute: ROOMY, per_day: ROOMY });
  const { key: studentKey } = await createDemoStudent(db, now, secretBox(Buffer.from(TEST_SECRETS_KEY, 'base64')));
  const studentId = (await setContractPlan(db, DEMO_STUDENT.email, {
    per_minute: ROOMY,
    per_day: ROOMY,
    ai_per_hour: ROOMY,
  }))!;
  return {
    url: throwaway.url,
    name: new URL(throwaway.url).pathname.slice(1),
    db,
    partnerKey,
    studentKey,
    studentId,
    async drop() {
      await db.destroy();
      await throwaway.drop();
    },
  };
}

/**
 * The server processes of a crash test, on the database `database()` names once its `before` has made it: `start` runs
 * one more on it (a drain of 1 s), `killAll` ends with SIGKILL those still running.
 */
export function crashServers(database: () => FaultDatabase, redisUrl: string) {
  const servers: ServerProcess[] = [];
  return {
    start(): ServerProcess {
      const server = startServerProcess({
        DATABASE_URL: database().url,
        REDIS_URL: redisUrl,
        SHUTDOWN_DRAIN_SECONDS: '1',
      });
      servers.push(server);
      return server;
    },
    killAll(): void {
      for (const server of servers)
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    },
  };
}

export interface Answer {
  status: number;
  contentType: string;
  headers: Headers;
  body: any;
  ms: number;
}

/**
 * One request with a deadline; a request that gets no answer within it fails the test that sent it. A hang has no
 * end of its own, so the default is far beyond a loaded machine's slowest answer.
 */
export async function call(url: string, init: RequestInit = {}, deadlineMs = 15_000): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(deadlineMs) });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    contentType,
    headers: res.headers,
    body: contentType.includes('json') ? JSON.parse(text) : text,
    ms: performance.now() - started,
  };
}

/** Like `call`, but a request that got no answer at all (refused, reset, timed out) is an Answer of status 0. */
export async function attempt(url: string, init: RequestInit = {}, deadlineMs = 5_000): Promise<Answer> {
  const started = performance.now();
  return call(url, init, deadlineMs).catch((error: Error) => ({
    status: 0,
    contentType: '',
    headers: new Headers(),
    body: `${error.message}: ${String((error.cause as Error | undefined)?.message ?? '')}`,
    ms: performance.now() - started,
  }));
}

/** The 503 problem every surface answers when a dependency fails. */
export function assertServiceUnavailable(answer: Answer, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  assert.match(answer.contentType, /^application\/problem\+json/, what);
  assert.equal(answer.body.code, 'service_unavailable', what);
  assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/, `${what}: Retry-After`);
}

/** Polls `attempt` until it returns true; resolves with the milliseconds it took, or rejects after `withinMs`. */
export async function until(attempt: () => Promise<boolean>, withinMs: number, what: string): Promise<number> {
  const started = performance.now();
  let last: unknown;
  while (performance.now() - started < withinMs) {
    try {
      if (await attempt()) return performance.now() - started;
    } catch (error) {
      last = error;
    }
    await sleep(200);
  }
  throw new Error(`${what}: not within ${withinMs} ms${last ? ` (last error: ${String(last)})` : ''}`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
