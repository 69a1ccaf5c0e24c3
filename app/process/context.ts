// What every part of a process's start reads: its configuration, its role, its logger, and the facts derived from them
// once (which database, whether this is the first start of an embedded one, whether it becomes a cluster's primary).
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createLogger } from '../../server/process/logger.ts';
import type { Config } from '../config.ts';
import { servesHttp, type ProcessRole } from './role.ts';

export interface ProcessContext {
  config: Config;
  role: ProcessRole;
  logger: Logger;
  /** The embedded database (no DATABASE_URL). */
  embedded: boolean;
  /** The embedded database's directory; undefined on PostgreSQL. */
  dataDir: string | undefined;
  /** A new data directory: the start says what it does at each step, where a restart says one line. */
  firstStart: boolean;
  /** This process forks WEB_CONCURRENCY workers and serves nothing itself (PostgreSQL, a role that serves). */
  clustered: boolean;
  /**
   * A start-up step, logged at info like the rest of the start (readable lines in a terminal, JSON in a log): a first
   * start takes seconds, and a newcomer should see it working. Cluster workers leave it to their primary.
   */
  progress: (step: string) => void;
}

export function processContext(config: Config, role: ProcessRole): ProcessContext {
  const logger = createLogger(config.logLevel);
  const embedded = !('databaseUrl' in config.database);
  const dataDir = 'dataDir' in config.database ? config.database.dataDir : undefined;
  return {
    config,
    role,
    logger,
    embedded,
    dataDir,
    firstStart: dataDir !== undefined && !existsSync(join(dataDir, 'PG_VERSION')),
    // A worker-role process is one process: run more of them to deliver more.
    clustered: config.webConcurrency > 1 && !embedded && servesHttp(role),
    progress: (step) => {
      if (!cluster.isWorker) logger.info(`${step}…`);
    },
  };
}
