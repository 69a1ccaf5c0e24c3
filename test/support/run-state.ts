// The state of one test process that several support modules share: the database the root hooks open, the contracts,
// and the coverage records every request and event adds to. In parallel mode each worker process has its own
// (process-records.ts gathers them at the run's end).
import type { Surface } from '../../server/contract/surfaces.ts';
import type { Notifications } from '../../db/notifications.ts';
import type { SurfaceContract } from './contract.ts';
import type { TestDatabase } from './test-db.ts';

interface RunState {
  database: TestDatabase | undefined;
  /** Set when a loaded module needs the shared database (shared-database.ts); the root hooks build it only then. */
  databaseWanted: boolean;
  /** The notification path of the run's database, opened by the first app that needs it (partner-app.ts). */
  notifications: Notifications | undefined;
  contracts: SurfaceContract[] | undefined;
  /** surface → operationId → statuses seen in its responses. */
  exercised: Map<Surface, Map<string, Set<number>>>;
  /** Event kinds whose payloads were checked against the spec (event-contract.ts). */
  eventTypesSeen: Set<string>;
  /** The test files this process ran. */
  filesRun: Set<string>;
}

export const runState: RunState = {
  database: undefined,
  databaseWanted: false,
  notifications: undefined,
  contracts: undefined,
  exercised: new Map(),
  eventTypesSeen: new Set(),
  filesRun: new Set(),
};
