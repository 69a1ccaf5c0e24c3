// How soon a change is told: from a write to the first attempt of its webhook at a receiver on loopback (a task
// created → task.created), and to the readiness event on an open stream (a task linked to an exam completed or
// reopened → readiness). The commit comes between the write's request and its answer, closer to the answer (after
// the commit the handler only renders its answer): the figures judged are timed from the answer, and the same
// latencies timed from the request, an upper bound that also holds the write's own time, are shown beside them.
// On PostgreSQL the writes go through a second process of the service (--role web, which delivers nothing), so the
// commit's NOTIFY has to cross processes to reach the measured service's webhook worker and its stream. The embedded
// database serves from one process only: there both are in-process.
// One write at a time, each waiting for what it causes (or a timeout, counted as a failure), then a random pause of
// 100-300 ms: no sample keeps in step with a poll, and the attempt before has been recorded (an endpoint takes one
// attempt at a time: a write that came while the previous attempt was still being recorded would measure that too).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser } from 'eventsource-parser';
import { startHttpProcess, stopProcess, type Started } from './processes.ts';

export interface LatencyFigures {
  samples: number;
  /** From the write's answer (negative: the event came before the answer). */
  p50Ms: number;
  p99Ms: number;
  /** From the write's request: at most this long after the commit. */
  fromRequestP50Ms: number;
  fromRequestP99Ms: number;
  /** Samples whose event did not come within the timeout. */
  timedOut: number;
}

export interface EventLatencies {
  /** The writes went through another process of the service than the one delivering and streaming. */
  acrossProcesses: boolean;
  /** A task created → the first attempt of its task.created webhook reaches the receiver. */
  webhookFirstAttempt: LatencyFigures;
  /** A task completed or reopened → the readiness event on the stream. */
  readinessStream: LatencyFigures;
}

/** bench/targets.json, per engine: `events`. */
export interface EventTargets {
  _note?: string;
  webhookFirstAttemptP50Ms: number;
  webhookFirstAttemptP99Ms: number;
  readinessStreamP50Ms: number;
}

export interface EventLatencyOptions {
  /** The measured service: it delivers webhooks and holds the stream. */
  serviceUrl: string;
  /** How to start another process of the service for the writes (PostgreSQL only); undefined: write to the service. */
  writer?: { args: string[]; env: NodeJS.ProcessEnv; cores: string | undefined; cwd: string };
  studentToken: string;
  samples: number;
  progress: (message: string) => void;
}

const EVENT_TIMEOUT_MS = 5_000;

export async function measureEventLatency(options: EventLatencyOptions): Promise<EventLatencies> {
  const { serviceUrl, studentToken } = options;
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    let writerUrl = serviceUrl;
    if (options.writer) {
      options.progress('event latency: a second process of the service (--role web) for the writes…');
      const { args, env, cores, cwd } = options.writer;
      const second: Started = await startHttpProcess([...args, '--role', 'web'], {
        env: { ...env, WEB_CONCURRENCY: '1' },
        cores,
        readyPath: '/livez',
        deadlineMs: 120_000,
        cwd,
      });
      cleanups.push(() => stopProcess(second.child));
      writerUrl = second.baseUrl;
    }
    const api = client(studentToken);

    options.progress(`event latency: ${options.samples} task(s) created, each timed to its webhook's first attempt…`);
    const receiver = await loopbackReceiver();
    cleanups.push(() => receiver.close());
    const endpoint = await api(
      serviceUrl,
      'POST',
      '/api/webhooks/endpoints',
      { url: receiver.url, event_types: ['task.created'], description: 'bench: event latency' },
      201,
    );
    cleanups.push(() => api(serviceUrl, 'DELETE', `/api/webhooks/endpoints/${endpoint.id}`, undefined, 204));
    const webhook = await sample(options.samples, async () => {
      const arrived = receiver.next();
      const sent = performance.now();
      await api(
        writerUrl,
        'POST',
        '/api/tasks',
        { title: 'Bench: event latency', due_at: '2030-01-15T09:00:00Z', course: 'Bench' },
        201,
      );
      const answered = performance.now();
      return { sent, answered, event: await arrived };
    });

    options.progress(`event latency: ${options.samples} readiness move(s), each timed to its event on an open stream…`);
    const examDate = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
    const task = await api(
      writerUrl,
      'POST',
      '/api/tasks',
      { title: 'Bench: past paper', due_at: `${examDate}T09:00:00Z`, course: 'Bench' },
      201,
    );
    const exam = await api(
      writerUrl,
      'POST',
      '/api/exams',
      { subject: 'Bench', exam_date: examDate, task_ids: [task.id] },
      201,
    );
    cleanups.push(() => api(writerUrl, 'DELETE', `/api/exams/${exam.id}`, undefined, 204));
    const stream = await openStream(serviceUrl + '/api/exams/readiness/stream', studentToken);
    cleanups.push(async () => stream.close());
    await stream.next('snapshot');
    let completed = false;
    const readiness = await sample(options.samples, async () => {
      // A move that came late for an earlier sample is not this one's.
      stream.drop('readiness');
      const arrived = stream.next('readiness');
      completed = !completed;
      const sent = performance.now();
      await api(writerUrl, 'PATCH', `/api/tasks/${task.id}`, { status: completed ? 'completed' : 'open' }, 200);
      const answered = performance.now();
      return { sent, answered, event: await arrived };
    });
    return { acrossProcesses: writerUrl !== serviceUrl, webhookFirstAttempt: webhook, readinessStream: readiness };
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error) => options.progress(`event latency cleanup: ${String(error)}`));
  }
}

/** What the figures miss of the engine's targets, in words. */
export function missedEventTargets(latencies: EventLatencies | undefined, targets: EventTargets | undefined): string[] {
  if (!latencies) return [];
  if (!targets) return ['event latency: no "events" targets in bench/targets.json'];
  const misses: string[] = [];
  const { webhookFirstAttempt: webhook, readinessStream: readiness } = latencies;
  if (webhook.timedOut > 0)
    misses.push(
      `webhook first attempt: ${webhook.timedOut} of ${webhook.samples} never came within ${EVENT_TIMEOUT_MS} ms`,
    );
  if (readiness.timedOut > 0)
    misses.push(
      `readiness stream: ${readiness.timedOut} of ${readiness.samples} events never came within ${EVENT_TIMEOUT_MS} ms`,
    );
  if (webhook.p50Ms > targets.webhookFirstAttemptP50Ms)
    misses.push(`webhook first attempt: p50 ${webhook.p50Ms} ms > max ${targets.webhookFirstAttemptP50Ms} ms`);
  if (webhook.p99Ms > targets.webhookFirstAttemptP99Ms)
    misses.push(`webhook first attempt: p99 ${webhook.p99Ms} ms > max ${targets.webhookFirstAttemptP99Ms} ms`);
  if (readiness.p50Ms > targets.readinessStreamP50Ms)
    misses.push(`readiness stream: p50 ${readiness.p50Ms} ms > max ${targets.readinessStreamP50Ms} ms`);
  return misses;
}

export function eventLatencyLines(latencies: EventLatencies, targets: EventTargets | undefined): string[] {
  const row = (name: string, f: LatencyFigures, target: string) =>
    `  ${name.padEnd(24)}${String(f.samples).padStart(8)}${String(f.p50Ms).padStart(8)}${String(f.p99Ms).padStart(8)}${`${f.fromRequestP50Ms} / ${f.fromRequestP99Ms}`.padStart(22)}  ${target}${f.timedOut > 0 ? `  ✗ ${f.timedOut} timed out` : ''}`;
  return [
    `  events after a write, ${latencies.acrossProcesses ? 'written through another process of the service' : 'in one process'} (from its answer, which follows its commit; from its request, which comes before it):`,
    `  ${'event'.padEnd(24)}${'samples'.padStart(8)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'from request p50/p99'.padStart(22)}  target`,
    row(
      'webhook first attempt',
      latencies.webhookFirstAttempt,
      targets ? `p50 ≤ ${targets.webhookFirstAttemptP50Ms}, p99 ≤ ${targets.webhookFirstAttemptP99Ms}` : '-',
    ),
    row('readiness on a stream', latencies.readinessStream, targets ? `p50 ≤ ${targets.readinessStreamP50Ms}` : '-'),
  ];
}

/** Runs `once` `count` times in a row, a random pause before each; a sample whose event never came counts apart. */
async function sample(
  count: number,
  once: () => Promise<{ sent: number; answered: number; event: number | undefined }>,
): Promise<LatencyFigures> {
  const fromAnswer: number[] = [];
  const fromRequest: number[] = [];
  let timedOut = 0;
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
    const { sent, answered, event } = await once();
    if (event === undefined) {
      timedOut++;
      continue;
    }
    fromAnswer.push(event - answered);
    fromRequest.push(event - sent);
  }
  return {
    samples: count,
    p50Ms: percentile(fromAnswer, 0.5),
    p99Ms: percentile(fromAnswer, 0.99),
    fromRequestP50Ms: percentile(fromRequest, 0.5),
    fromRequestP99Ms: percentile(fromRequest, 0.99),
    timedOut,
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! * 10) / 10;
}

/** JSON requests as the student; a status other than `expected` throws with the body. */
function client(token: string) {
  return async (baseUrl: string, method: string, path: string, body: unknown, expected: number): Promise<any> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status !== expected)
      throw new Error(
        `event latency: ${method} ${path} answered ${res.status}, expected ${expected}: ${text.slice(0, 300)}`,
      );
    return text ? JSON.parse(text) : undefined;
  };
}

/** A receiver that answers 204 at once; `next()` resolves with the arrival time of the next request, or undefined after the timeout. */
async function loopbackReceiver(): Promise<{
  url: string;
  next(): Promise<number | undefined>;
  close(): Promise<void>;
}> {
  let waiting: ((at: number) => void) | undefined;
  const server: Server = createServer((req, res) => {
    // Timed at the request's arrival: the attempt has started by then.
    const at = performance.now();
    waiting?.(at);
    waiting = undefined;
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    next: () => within(new Promise<number>((resolve) => (waiting = resolve))),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * An open text/event-stream; `next(type)` resolves with the arrival time of the first event of that type not yet
 * taken (one may have come before the call), or undefined after the timeout; `drop(type)` forgets those not taken.
 */
async function openStream(
  url: string,
  token: string,
): Promise<{ next(type: string): Promise<number | undefined>; drop(type: string): void; close(): void }> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`event latency: the readiness stream answered ${res.status}`);
  const arrived = new Map<string, number[]>();
  const waiting = new Map<string, (at: number) => void>();
  const parser = createParser({
    onEvent: (event) => {
      const at = performance.now();
      const type = event.event ?? 'message';
      const waiter = waiting.get(type);
      waiting.delete(type);
      if (waiter) waiter(at);
      else arrived.set(type, [...(arrived.get(type) ?? []), at]);
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) parser.feed(decoder.decode(chunk, { stream: true }));
  })().catch(() => {});
  return {
    next: (type) => {
      const early = arrived.get(type)?.shift();
      return early !== undefined
        ? Promise.resolve(early)
        : within(new Promise<number>((resolve) => waiting.set(type, resolve)));
    },
    drop: (type) => void arrived.delete(type),
    close: () => abort.abort(),
  };
}

function within(arrival: Promise<number>): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), EVENT_TIMEOUT_MS)));
  return Promise.race([arrival, timeout]).finally(() => clearTimeout(timer));
}
