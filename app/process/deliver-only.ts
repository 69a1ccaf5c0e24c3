// The worker role: webhook delivery without an HTTP listener. A stop stops claiming, lets the attempts in flight
// finish (any cut short by the deadline are made again once their lease ends), then closes the database.
import { describeTarget, type Db } from '../../db/connect.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { createLifecycle } from '../../server/process/lifecycle.ts';
import { collectProcessMetrics, metricsRegistry } from '../../server/process/metrics.ts';
import { startEmbeddedVacuum } from '../../services/maintenance/embedded-vacuum.ts';
import { metricsUrl, serveMetrics } from '../metrics-server.ts';
import { secretsKeyFor } from '../secrets-key.ts';
import { deliveryWorker, listenForNotifications } from './background-work.ts';
import { workerBanner } from './banner.ts';
import type { ProcessContext } from './context.ts';

export async function deliverOnly(context: ProcessContext, db: Db): Promise<void> {
  const { config, logger } = context;
  collectProcessMetrics();
  const lifecycle = createLifecycle();
  const notifications = listenForNotifications(context, db);
  const worker = await deliveryWorker(context, db, lifecycle, secretBox(secretsKeyFor(config)), notifications);
  const vacuum = startEmbeddedVacuum({ db, lifecycle, logger });
  const metricsServer = config.metrics
    ? await serveMetrics(config.metrics, () => metricsRegistry.metrics(), metricsRegistry.contentType)
    : undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason: signal }, 'stopping: finishing the webhook attempts in flight');
    lifecycle.beginDrain();
    setTimeout(() => {
      logger.error(
        { attemptsRunning: lifecycle.running },
        'stop deadline reached: exiting; unfinished attempts are made again when their lease ends',
      );
      process.exit(1);
    }, config.shutdownGraceSeconds * 1000).unref();
    await Promise.all([worker.stop(), vacuum?.stop()]);
    await lifecycle.idle();
    metricsServer?.close();
    await Promise.allSettled([notifications.close(), db.destroy()]);
    logger.info('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
  // After the signals are handled, as the web process's banner (serve.ts).
  logger.info({ database: describeTarget(config.database) }, 'delivering webhooks');
  process.stderr.write(workerBanner(context, metricsServer && metricsUrl(metricsServer)) + '\n');
}
