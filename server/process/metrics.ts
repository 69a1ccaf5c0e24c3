// Prometheus metrics (prom-client): what a dashboard of the service needs — requests and latency per operationId
// and status (RED), rate-limit refusals per limiter, database pool use and wait, event-loop lag (default
// metrics), open SSE streams. Label values are operationIds, route patterns and limiter names, never raw paths
// or ids, so the number of series stays bounded. Served on METRICS_PORT only (app/metrics-server.ts).
import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';

/** What the metrics server serves: prom-client's default registry, where every metric below registers itself. */
export const metricsRegistry = register;

const requests = new Counter({
  name: 'http_requests_total',
  help: 'Requests answered, by operationId (or route) and status',
  labelNames: ['operation', 'status'] as const,
});
const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request to the end of its response, by operationId (or route) and status',
  labelNames: ['operation', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});
const rateLimitRefusals = new Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused with 429, by limiter (surface or pool, and window)',
  labelNames: ['limiter'] as const,
});
const sseStreams = new Gauge({ name: 'sse_streams_open', help: 'Server-sent event streams open now' });
const poolAcquire = new Histogram({
  name: 'db_pool_acquire_seconds',
  help: 'Time a query waited for a PostgreSQL connection from the pool',
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
});
const pools = new Set<pg.Pool>();
const poolGauge = (name: string, help: string, read: (pool: pg.Pool) => number) =>
  new Gauge({
    name,
    help,
    collect() {
      this.set([...pools].reduce((sum, pool) => sum + read(pool), 0));
    },
  });
poolGauge('db_pool_connections', 'PostgreSQL connections the pool holds (in use and idle)', (p) => p.totalCount);
poolGauge('db_pool_connections_idle', 'PostgreSQL connections idle in the pool', (p) => p.idleCount);
poolGauge('db_pool_waiting', 'Queries waiting for a PostgreSQL connection', (p) => p.waitingCount);

/** Process metrics (CPU, memory, event-loop lag, GC); in a cluster worker, also answers the primary's requests. */
export function collectProcessMetrics(): void {
  collectDefaultMetrics();
  if (cluster.isWorker) {
    // The primary aggregates the workers' default registries over IPC; constructing one sets up the worker's side.
    new AggregatorRegistry();
  }
}

/** Counts and times every response, labelled by the operationId the surface routed to, else the Express route. */
export function requestMetrics() {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const end = requestDuration.startTimer();
    res.once('finish', () => {
      const labels = { operation: operationLabel(req, res), status: String(res.statusCode) };
      requests.inc(labels);
      end(labels);
    });
    next();
  };
}

const OPERATION = Symbol('operationId');
type Labelled = ServerResponse & { [OPERATION]?: string };

/** Called by a surface once openapi-backend has matched the request to an operation. */
export function labelOperation(res: ServerResponse, operationId: string | undefined): void {
  if (operationId) (res as Labelled)[OPERATION] = operationId;
}

function operationLabel(req: IncomingMessage, res: ServerResponse): string {
  const operationId = (res as Labelled)[OPERATION];
  if (operationId) return operationId;
  // Set by Express on the requests it routes (OAuth, docs, probes).
  const route = (req as { route?: { path?: unknown } }).route?.path;
  return typeof route === 'string' ? route : 'unmatched';
}

export function countRateLimitRefusal(limiter: string): void {
  rateLimitRefusals.inc({ limiter });
}

/** Marks an SSE stream open until its response closes. */
export function trackSseStream(res: ServerResponse): void {
  sseStreams.inc();
  res.once('close', () => sseStreams.dec());
}

/** Reports a pg pool's size and its waits for a connection. */
export function observePool(pool: pg.Pool): void {
  pools.add(pool);
  const connect = pool.connect.bind(pool) as (
    callback?: (...args: unknown[]) => void,
  ) => Promise<pg.PoolClient> | undefined;
  // Kysely checks connections out with pool.connect(); timing that call is the wait for a free connection. pg-pool's
  // own query() checks out with a callback, which must reach the pool (a wrapper that dropped it hung every
  // pool.query for good, holding its connection).
  (pool as { connect: (callback?: (...args: unknown[]) => void) => Promise<pg.PoolClient> | undefined }).connect = (
    callback,
  ) => {
    if (callback) return connect(callback);
    const end = poolAcquire.startTimer();
    return connect()!.finally(end);
  };
}

const webhookDeliveries = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, another attempt scheduled), failed (given up), skipped (endpoint disabled or grant gone: not sent)',
  labelNames: ['outcome'] as const,
});
const webhookAttemptDuration = new Histogram({
  name: 'webhook_attempt_duration_seconds',
  help: 'Time of one webhook attempt, connect to the end of the response, by result (2xx, other status, or no response)',
  labelNames: ['result'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

export function countDeliveryAttempt(outcome: DeliveryOutcome): void {
  webhookDeliveries.inc({ outcome });
}

export function observeWebhookAttempt(durationMs: number, status: number | null): void {
  const result = status === null ? 'no_response' : status >= 200 && status < 300 ? '2xx' : 'other_status';
  webhookAttemptDuration.observe({ result }, durationMs / 1000);
}
