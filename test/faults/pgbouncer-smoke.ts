// The smoke set of API calls run against real server processes behind a pooler (and across hosts): every read and
// write path a student and a partner take each day, a retried write with an Idempotency-Key, and concurrent requests
// (which spread transactions over several pooled server connections). Each call asserts its status.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

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
export async function send(baseUrl: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { 'X-Service-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

export async function expectStatus(reply: Promise<Reply>, status: number, what: string): Promise<any> {
  const { status: got, body } = await reply;
  assert.equal(got, status, `${what}: ${got} ${JSON.stringify(body)}`);
  return body;
}

export async function createTask(baseUrl: string, key: string, title: string): Promise<string> {
  const task = await expectStatus(send(baseUrl, key, 'POST', '/api/tasks', { title, due_at: '2030-06-01T09:00:00Z', course: 'Pooler' }), 201, 'create a task');
  return task.id as string;
}

/** The smoke set; returns the number of requests it made. */
export async function runSmokeSet(baseUrl: string, keys: Keys): Promise<number> {
  let made = 0;
  const ok = (method: string, path: string, status: number, body?: unknown, key = keys.studentKey, headers: Record<string, string> = {}) => {
    made++;
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
  made++;
  await ok('GET', `/api/tasks/${taskId}`, 200);
  const list = await ok('GET', '/api/tasks?limit=50', 200);
  assert.ok(list.data.some((task: { id: string }) => task.id === taskId), 'the new task is listed');
  await ok('PATCH', `/api/tasks/${taskId}`, 200, { status: 'completed' });
  await ok('GET', '/api/today/loop', 200);
  await ok('GET', '/api/schedule', 200);

  const deck = await ok('POST', '/api/flashcards/decks', 201, { title: 'Pooler deck' });
  const card = await ok('POST', `/api/flashcards/decks/${deck.id}/cards`, 201, { front: 'pgbouncer', back: 'a pooler' });
  await ok('POST', `/api/flashcards/cards/${card.id}/reviews`, 201, { grade: 4 });
  await ok('GET', `/api/flashcards/decks/${deck.id}/cards`, 200);

  // A retried write with the same Idempotency-Key answers the first one's result (its try-lock is per transaction).
  const idempotency = { 'Idempotency-Key': randomUUID() };
  const body = { title: 'once only', due_at: '2030-06-02T09:00:00Z', course: 'Pooler' };
  const first = await ok('POST', '/api/tasks', 201, body, keys.studentKey, idempotency);
  const again = await ok('POST', '/api/tasks', 201, body, keys.studentKey, idempotency);
  assert.equal(again.id, first.id, 'a retry with the same Idempotency-Key makes no second task');

  // Concurrent requests: each transaction may land on another server connection of the pooler.
  const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? send(baseUrl, keys.studentKey, 'GET', '/api/today/loop') : send(baseUrl, keys.partnerKey, 'GET', '/api/v1/leaderboards/global'))));
  made += burst.length;
  assert.deepEqual(
    burst.map((reply) => reply.status),
    Array(burst.length).fill(200),
  );
  return made;
}
