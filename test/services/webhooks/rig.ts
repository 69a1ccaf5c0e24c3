// What the in-process delivery tests share: a database of their own, a secret box, loopback receivers, endpoints
// whose secrets those receivers verify with, and delivery workers; every receiver, worker and notification
// connection a test starts is closed after it, and the database after the suite. Call it inside a `describe`.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { connect, type Db } from '../../../db/connect.ts';
import { notificationsFor, type Notifications } from '../../../db/notifications.ts';
import { secretBox } from '../../../server/auth/secret-box.ts';
import type { WebhookConfig } from '../../../services/webhooks/delivery-config.ts';
import type { DeliveryLimits } from '../../../services/webhooks/gate.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../../../services/webhooks/worker.ts';
import { createFreshDatabase, type TestDatabase } from '../../support/test-db.ts';
import { insertEndpoint, type TestEndpoint } from './fixtures.ts';
import { startReceiver, type Receiver, type Reply } from './receiver.ts';
import { observedRelayPasses, type RelayPasses } from './relay-passes.ts';

type Owner = Parameters<typeof insertEndpoint>[2];
type EndpointOptions = Omit<Parameters<typeof insertEndpoint>[3], 'url' | 'event_types'>;

export interface DeliveryRig {
  /** The suite's database (set once its `before` has run). */
  readonly db: Db;
  readonly database: TestDatabase;
  /** A loopback receiver answering `otherwise` once its script is spent. */
  receiver(otherwise?: Reply): Promise<Receiver>;
  /** An endpoint of `owner` at `receiver`, which verifies its deliveries with the endpoint's secret. */
  endpoint(
    owner: Owner,
    receiver: Receiver,
    eventTypes: string[],
    options?: EndpointOptions & { db?: Db },
  ): Promise<TestEndpoint>;
  /**
   * Another pool on the suite's database, as another process would hold (on PostgreSQL; the embedded database has
   * one connection, which this then is), closed before the database.
   */
  anotherPool(): Db;
  /**
   * A worker on the suite's database, woken by the commits' notifications when `woken` (as a process runs one), with
   * its relay's passes observed (relay-passes.ts).
   */
  work(options?: {
    config?: Partial<WebhookConfig>;
    limits?: Partial<DeliveryLimits>;
    woken?: boolean;
  }): WorkerUnderTest;
}

export interface WorkerUnderTest extends DeliveryWorker {
  passes: RelayPasses;
}

/** `cleanUp` runs after each test, after its workers stopped: what one test left queued is not the next one's load. */
export function deliveryRig(config: WebhookConfig, cleanUp?: (db: Db) => Promise<void>): DeliveryRig {
  const box = secretBox(randomBytes(32));
  const silent = pino({ level: 'silent' });
  let database: TestDatabase | undefined;
  const receivers: Receiver[] = [];
  const workers: DeliveryWorker[] = [];
  const opened: Notifications[] = [];
  const pools: Db[] = [];

  before(async function () {
    this.timeout(180_000);
    database = await createFreshDatabase();
  });
  afterEach(async () => {
    // Receivers first: their connections end, so a worker's attempt held by one that never answers ends at once.
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await Promise.all(opened.splice(0).map((n) => n.close()));
    if (cleanUp) await cleanUp(rig.db);
  });
  after(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.destroy()));
    await database?.close();
  });

  const rig: DeliveryRig = {
    get database() {
      if (!database) throw new Error('the delivery rig is used before its database was made');
      return database;
    },
    get db() {
      return rig.database.db;
    },
    async receiver(otherwise) {
      const receiver = await startReceiver();
      if (otherwise !== undefined) receiver.script([], otherwise);
      receivers.push(receiver);
      return receiver;
    },
    async endpoint(owner, receiver, eventTypes, { db = rig.db, ...options } = {}) {
      const endpoint = await insertEndpoint(db, box, owner, { ...options, url: receiver.url, event_types: eventTypes });
      receiver.secrets.push(endpoint.secret);
      return endpoint;
    },
    anotherPool() {
      if (!rig.database.url) return rig.db;
      const pool = connect({ databaseUrl: rig.database.url });
      pools.push(pool);
      return pool;
    },
    work({ config: overrides = {}, limits = {}, woken = false } = {}) {
      let notifications: Notifications | undefined;
      if (woken)
        opened.push((notifications = notificationsFor(rig.db, rig.database.url, { logger: silent, timeoutMs: 5_000 })));
      const passes = observedRelayPasses();
      const worker = startDeliveryWorker({
        db: rig.db,
        box,
        config: { ...config, ...overrides },
        logger: silent,
        lifecycle: passes.lifecycle,
        limits,
        ...(notifications ? { notifications } : {}),
      });
      // Stopped once, by the test or after it.
      let stopping: Promise<void> | undefined;
      const stop = () => (stopping ??= worker.stop());
      workers.push({ stop });
      return { stop, passes };
    },
  };
  return rig;
}
