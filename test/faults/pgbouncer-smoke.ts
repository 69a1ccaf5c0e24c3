// The smoke set of API calls run against real server processes behind a pooler (and across hosts): every read and
// write path a student and a partner take each day, a retried write with an Idempotency-Key, and concurrent requests
// (which spread transactions over several pooled server connections). Each call asserts its status.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { KEPT_WITHOUT_NOTIFICATION_MS } from '../../db/notifications-after-commit.ts';
import { insertPersonalKey } from '../../db/queries/personal-api-keys.ts';
import { createAccount } from '../../server/auth/accounts.ts';
import { insertWithFreshKey } from '../../server/auth/api-keys.ts';
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { paidCheckout, providerSignature, TEST_PAYMENT_PROVIDER_SECRET } from '../support/payment-provider.ts';

export interface Keys {
  /** A student's personal key with every scope. */
  studentKey: string;
  partnerKey: string;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/** One request; the body is parsed when it is JSON. */
export async function send(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: {
      'X-Service-API-Key': key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
}

export async function expectStatus(reply: Promise<Reply>, status: number, what: string): Promise<any> {
  const { status: got, body } = await reply;
  assert.equal(got, status, `${what}: ${got} ${JSON.stringify(body)}`);
  return body;
}

/** A new student on the free plan, with a personal key holding every scope. */
export async function studentWithKey(db: Db, nickname: string): Promise<{ id: string; email: string; key: string }> {
  const email = `${nickname}@pooler.test`;
  const account = await createAccount(db, {
    email,
    nickname,
    first_name: 'P',
    password: 'correct horse battery staple',
    time_zone: 'UTC',
    country_code: null,
  });
  const { key } = await insertWithFreshKey(({ prefix, hash }) =>
    insertPersonalKey(db, {
      id: randomUUID(),
      user_id: account.id,
      prefix,
      key_hash: hash,
      name: 'pooler tests',
      scopes: [...ALL_SCOPES],
    }),
  );
  return { id: account.id, email, key };
}

/** The server processes' PAYMENT_PROVIDER_SECRET, for `payPlus`. */
export const PAYMENT_PROVIDER_SECRET = TEST_PAYMENT_PROVIDER_SECRET;

/** The payment provider's callback through `baseUrl`: a paid plus checkout of `email` (a plan change that commits there). */
export async function payPlus(baseUrl: string, email: string): Promise<void> {
  const payload = JSON.stringify(paidCheckout({ email }));
  const response = await fetch(`${baseUrl}/api/payments/provider-events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...providerSignature(payload) },
    body: payload,
    signal: AbortSignal.timeout(10_000),
  });
  assert.equal(response.status, 200, `the payment callback: ${response.status} ${await response.text()}`);
}

/** The per-minute quota of the student's plan, as the RateLimit-Policy header of a request through `baseUrl` says. */
export async function minuteQuota(baseUrl: string, key: string): Promise<string | undefined> {
  return /"minute"; q=(\d+);/.exec(
    (await send(baseUrl, key, 'GET', '/api/users/me')).headers.get('ratelimit-policy') ?? '',
  )?.[1];
}

/**
 * A change committed through one process reaches the others by the commit's NOTIFY (db/invalidated-cache.ts), a few
 * milliseconds after the response that made it, so a request sent at once to another process may still be answered
 * from its cache: this asks every process until `holds` is true there, within `withinMs`, then twice more (once it
 * holds, it holds). Says how many answers were stale and when the last process held, from the change's response.
 * Within a third of the longest a process keeps an entry without a notification: what holds by then was dropped by
 * the notification, not by the entry's age.
 */
export async function heldEverywhere(
  bases: string[],
  holds: (base: string) => Promise<boolean>,
  withinMs = KEPT_WITHOUT_NOTIFICATION_MS / 3,
): Promise<string> {
  const changedAt = performance.now();
  let stale = 0;
  for (const base of bases) {
    while (!(await holds(base))) {
      stale++;
      assert.ok(performance.now() - changedAt < withinMs, `${base}: the change did not hold within ${withinMs} ms`);
    }
  }
  const held = performance.now() - changedAt;
  for (const base of [...bases, ...bases]) assert.ok(await holds(base), `${base}: the change held, then did not`);
  return `${stale} stale ${stale === 1 ? 'answer' : 'answers'}, all held ${Math.round(held)} ms after the change`;
}

export async function createTask(baseUrl: string, key: string, title: string): Promise<string> {
  const task = await expectStatus(
    send(baseUrl, key, 'POST', '/api/tasks', { title, due_at: '2030-06-01T09:00:00Z', course: 'Pooler' }),
    201,
    'create a task',
  );
  return task.id as string;
}

/**
 * The smoke set; returns how many of its requests reach the database, each in at least one transaction: the student's.
 * The partner's reads are answered from what each process keeps in memory (universities, /stats, the boards, holidays,
 * the key), so a pooler's count of transactions cannot vouch for them, nor they for it.
 */
export async function runSmokeSet(baseUrl: string, keys: Keys): Promise<number> {
  let reachingDatabase = 0;
  const ok = (
    method: string,
    path: string,
    status: number,
    body?: unknown,
    key = keys.studentKey,
    headers: Record<string, string> = {},
  ) => {
    if (key === keys.studentKey) reachingDatabase++;
    return expectStatus(send(baseUrl, key, method, path, body, headers), status, `${method} ${path}`);
  };
  const partner = (path: string) => ok('GET', path, 200, undefined, keys.partnerKey);

  await partner('/api/v1/health');
  const universities = await partner('/api/v1/universities?limit=3');
  await partner(`/api/v1/universities/${universities[0].id}`);
  await partner('/api/v1/stats');
  await partner('/api/v1/leaderboards/global');
  await partner('/api/v1/holidays/kz');

  await ok('GET', '/api/users/me', 200);
  const taskId = await createTask(baseUrl, keys.studentKey, `smoke ${randomUUID().slice(0, 8)}`);
  reachingDatabase++;
  await ok('GET', `/api/tasks/${taskId}`, 200);
  const list = await ok('GET', '/api/tasks?limit=50', 200);
  assert.ok(
    list.data.some((task: { id: string }) => task.id === taskId),
    'the new task is listed',
  );
  await ok('PATCH', `/api/tasks/${taskId}`, 200, { status: 'completed' });
  await ok('GET', '/api/today/loop', 200);
  await ok('GET', '/api/schedule', 200);

  const deck = await ok('POST', '/api/flashcards/decks', 201, { title: 'Pooler deck' });
  const card = await ok('POST', `/api/flashcards/decks/${deck.id}/cards`, 201, {
    front: 'pgbouncer',
    back: 'a pooler',
  });
  await ok('POST', `/api/flashcards/cards/${card.id}/reviews`, 201, { grade: 4 });
  await ok('GET', `/api/flashcards/decks/${deck.id}/cards`, 200);

  // A retried write with the same Idempotency-Key answers the first one's result (its try-lock is per transaction).
  const idempotency = { 'Idempotency-Key': randomUUID() };
  const body = { title: 'once only', due_at: '2030-06-02T09:00:00Z', course: 'Pooler' };
  const first = await ok('POST', '/api/tasks', 201, body, keys.studentKey, idempotency);
  const again = await ok('POST', '/api/tasks', 201, body, keys.studentKey, idempotency);
  assert.equal(again.id, first.id, 'a retry with the same Idempotency-Key makes no second task');

  // Concurrent requests: each transaction may land on another server connection of the pooler.
  const burst = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      i % 2
        ? send(baseUrl, keys.studentKey, 'GET', '/api/today/loop')
        : send(baseUrl, keys.partnerKey, 'GET', '/api/v1/leaderboards/global'),
    ),
  );
  reachingDatabase += burst.length / 2;
  assert.deepEqual(
    burst.map((reply) => reply.status),
    Array(burst.length).fill(200),
  );
  return reachingDatabase;
}
