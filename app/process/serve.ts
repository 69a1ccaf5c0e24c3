// A process that serves the API (role `all` or `web`, or a cluster's worker): the app on its listener, the background
// work its role brings, the operator's socket beside an embedded database, and the graceful stop that ends them all.
import cluster from 'node:cluster';
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { describeTarget, type Db } from '../../db/connect.ts';
import { accessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { signingKeysFor } from '../../server/auth/signing-key-store.ts';
import { answerClientErrors } from '../../server/http/client-errors.ts';
import { problemFields, problems } from '../../server/http/problems.ts';
import { requestTimeoutOptions } from '../../server/http/request-timeout.ts';
import type { LimitStores } from '../../server/limits/rate-limits.ts';
import { createLifecycle, stopOnSignals } from '../../server/process/lifecycle.ts';
import { collectProcessMetrics, metricsRegistry } from '../../server/process/metrics.ts';
import { createAiQueue } from '../../services/ai/queue.ts';
import { tutorFromConfig } from '../../services/ai/tutor/index.ts';
import { createExportLimits } from '../../services/exports/export-limits.ts';
import { startEmbeddedVacuum } from '../../services/maintenance/embedded-vacuum.ts';
import { createApp } from '../app.ts';
import { localUrl } from '../config.ts';
import { serveCliSocket } from '../cli/server-socket.ts';
import type { DemoCredentials } from '../demo-student.ts';
import { metricsUrl, serveMetrics } from '../metrics-server.ts';
import { secretsKeyFor } from '../secrets-key.ts';
import { deliveryWorker, listenForNotifications } from './background-work.ts';
import { banner } from './banner.ts';
import type { ProcessContext } from './context.ts';
import { deliversWebhooks } from './role.ts';

export async function serve(
  context: ProcessContext,
  db: Db,
  demo: DemoCredentials | undefined,
  limitStores: LimitStores,
): Promise<void> {
  const { config, logger, role, dataDir } = context;
  const signingKeys = await signingKeysFor(config, db, (error) =>
    logger.warn({ err: error }, 'could not re-read the signing keys; verifying with the set already known'),
  );
  const tutor = tutorFromConfig(config.ai);
  collectProcessMetrics();
  const lifecycle = createLifecycle();
  // One box seals and opens the webhook secrets for the endpoint API and for delivery.
  const secrets = secretBox(secretsKeyFor(config));
  // Readiness moves reach this process's streams over it, and new events its webhook worker, whichever process made
  // them.
  const notifications = listenForNotifications(context, db);
  const worker = deliversWebhooks(role)
    ? await deliveryWorker(context, db, lifecycle, secrets, notifications)
    : undefined;
  // Whatever the role: the embedded database has no autovacuum, and this process is the only one that opens it.
  const vacuum = startEmbeddedVacuum({ db, lifecycle, logger });
  const webhooks = { secrets, targets: { allowPrivate: config.webhooks.allowPrivateTargets } };
  let server: Server;
  try {
    const appFor = (issuer: string) =>
      createApp({
        db,
        logger,
        limitStores,
        tokens: accessTokenIssuer(signingKeys, { issuer, now: () => new Date() }),
        tutor,
        webhooks,
        aiQueue: createAiQueue(config.aiQueue),
        exports: createExportLimits(config.exports),
        config,
        lifecycle,
        notifications,
        streamSettings: config.streams,
        ...(config.paymentProviderSecret ? { paymentProviderSecret: config.paymentProviderSecret } : {}),
      });
    const serverOf = (handler: RequestListener) =>
      answerClientErrors(createServer(requestTimeoutOptions(config.requestTimeoutMs), handler));
    if (config.publicUrl) {
      server = await listen(serverOf(await appFor(config.publicUrl)), config.port);
    } else {
      // PORT=0 without PUBLIC_URL: the issuer and the feed links name the port the system picks, so the process
      // listens before the app exists. Nobody knows the port before the 'listening' line below, so the refusal
      // meanwhile is for a port scanner only.
      let app: RequestListener | undefined;
      server = await listen(
        serverOf((req, res) => (app ? app(req, res) : notYetServing(res))),
        config.port,
      );
      try {
        app = await appFor(localUrl(portOf(server)));
      } catch (error) {
        server.close();
        throw error;
      }
    }
  } catch (error) {
    // The background work started above stops before the caller closes the database under it: otherwise its next
    // query fails on the closed pool and logs errors after the start's one line.
    signingKeys.stop();
    await Promise.allSettled([worker?.stop(), vacuum?.stop(), notifications.close()]);
    throw error;
  }
  const port = portOf(server);
  logger.info(
    { port, database: describeTarget(config.database), sharedLimits: Boolean(config.redisUrl), tutor: tutor.model },
    'listening',
  );
  const cliSocket = dataDir && !dataDir.startsWith('memory://') ? await openCliSocket(context, dataDir, db) : undefined;
  // In a cluster the primary serves the workers' metrics, aggregated, and prints the banner.
  const metricsServer =
    config.metrics && !cluster.isWorker
      ? await serveMetrics(config.metrics, () => metricsRegistry.metrics(), metricsRegistry.contentType)
      : undefined;

  stopOnSignals(server, lifecycle, {
    drainMs: config.shutdownDrainSeconds * 1000,
    deadlineMs: config.shutdownGraceSeconds * 1000,
    logger,
    release: async () => {
      signingKeys.stop();
      metricsServer?.close();
      await Promise.all([worker?.stop(), vacuum?.stop(), cliSocket?.close()]);
      return Promise.allSettled([notifications.close(), db.destroy(), limitStores.close()]);
    },
  });
  // After the signals are handled: a supervisor that stops the process as soon as it reads the banner gets a graceful
  // stop, not the default action of a signal that came before its handler.
  if (!cluster.isWorker)
    process.stderr.write(banner(context, port, demo, metricsServer && metricsUrl(metricsServer)) + '\n');
}

function portOf(server: Server): number {
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the server listens on no TCP port');
  return address.port;
}

/** What a request gets between the listener opening and the app being made (the PORT=0 start only). */
function notYetServing(res: ServerResponse): void {
  const problem = problems.serviceUnavailable('The service is starting.');
  res.writeHead(problem.status, {
    ...problem.extra.headers,
    'content-type': 'application/problem+json; charset=utf-8',
    connection: 'close',
  });
  res.end(JSON.stringify(problemFields(problem)));
}

/**
 * Express's app.listen hands a listen error (EADDRINUSE) to its callback, where it is easily lost; a plain server
 * rejects here instead, and the start fails with one line.
 */
function listen(server: Server, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => (server.off('error', reject), resolve(server)));
  });
}

/**
 * `npm run cli` while this process holds the embedded database: command lines sent to a socket in its directory run
 * here (app/cli/server-socket.ts). Serving goes on without it if the socket cannot be made (a path too long for
 * a socket): the CLI then says the directory is in use.
 */
async function openCliSocket({ config, logger }: ProcessContext, dataDir: string, db: Db) {
  try {
    return await serveCliSocket(dataDir, db, describeTarget(config.database));
  } catch (error) {
    logger.warn(
      { err: error },
      'npm run cli cannot reach this server (no socket in the data directory): stop the server to run commands',
    );
    return undefined;
  }
}
