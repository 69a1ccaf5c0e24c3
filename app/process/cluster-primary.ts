// The cluster primary of `npm start` with WEB_CONCURRENCY above 1 (PostgreSQL only): it forks that many workers
// (each runs app/main.ts and serves; node:cluster shares the port between them), replaces a worker that dies,
// waiting longer after each quick death (1 s, 2 s, 4 s … up to 30 s), and on SIGTERM/SIGINT passes the signal to
// every worker, waits for them to finish their own graceful stop, then exits. It serves the workers' aggregated
// metrics on METRICS_PORT. It holds no database connection and serves no request itself.
//
// The forks run main.ts with the primary's arguments, so they take its role (app/process/role.ts): `all` (serve
// and deliver webhooks, the default) or `web`. A `--role worker` process is never clustered: delivery scales by
// running more worker processes, which share the queue in PostgreSQL.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.ts';
import { metricsUrl, serveMetrics } from '../metrics-server.ts';

const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that lived this long died of something other than its start: the back-off starts over. */
const HEALTHY_AFTER_MS = 60_000;
/** After the workers' own grace period, how long the primary waits before it kills what is left. */
const STOP_MARGIN_MS = 5_000;

export async function runPrimary(options: {
  config: Config;
  logger: Logger;
  banner: (port: number, metricsUrl: string | undefined) => string;
}): Promise<void> {
  const { config, logger } = options;
  const aggregator = new AggregatorRegistry();
  const metricsServer = config.metrics
    ? await serveMetrics(config.metrics, () => aggregator.clusterMetrics(), aggregator.contentType)
    : undefined;

  const startedAt = new Map<Worker, number>();
  let quickDeaths = 0;
  let anyListening = false;
  let stopping = false;

  const fork = () => startedAt.set(cluster.fork(), Date.now());

  cluster.on('listening', (_worker, address) => {
    if (anyListening) return;
    anyListening = true;
    process.stderr.write(options.banner(address.port, metricsServer && metricsUrl(metricsServer)) + '\n');
  });
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? Date.now());
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) {
        logger.info('stopped');
        process.exit();
      }
      return;
    }
    // A worker that cannot start (the port is taken, Redis is unreachable) has said why; starting it again and again
    // would hide that behind a restart loop, so the whole start fails instead.
    if (!anyListening) {
      logger.error({ pid: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      stopAll('start failed');
      process.exitCode = 1;
      return;
    }
    quickDeaths = lived >= HEALTHY_AFTER_MS ? 0 : quickDeaths + 1;
    const delay = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** Math.max(0, quickDeaths - 1));
    logger.warn({ pid: worker.process.pid, code, signal, restartInMs: delay }, 'a worker died; starting another');
    setTimeout(() => stopping || fork(), delay);
  });

  const stopAll = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, workers: startedAt.size }, 'stopping: the workers finish their requests in flight');
    metricsServer?.close();
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
    if (startedAt.size === 0) process.exit();
    setTimeout(
      () => {
        logger.error('workers did not stop in time; killing them');
        for (const worker of startedAt.keys()) worker.process.kill('SIGKILL');
        process.exit(1);
      },
      config.shutdownGraceSeconds * 1000 + STOP_MARGIN_MS,
    ).unref();
  };
  process.on('SIGTERM', () => stopAll('SIGTERM'));
  process.on('SIGINT', () => stopAll('SIGINT'));

  for (let i = 0; i < config.webConcurrency; i++) fork();
}
