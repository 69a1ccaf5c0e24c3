// The state of one test run, kept on globalThis. Mocha loads each test file with require() when it can (tsx then
// compiles it to CommonJS) and with import() otherwise (when it reaches an ESM-only package such as jose), so a
// support module may exist twice in one run: once per module system. Both copies must see the same database,
// contracts and coverage records.
import type { Surface } from '../../server/contract/surfaces.ts';
import type { Notifications } from '../../db/notifications.ts';
import type { SurfaceContract } from './contract.ts';
import type { TestDatabase } from './test-db.ts';

interface RunState {
  database: TestDatabase | undefined;
  /** The notification path of the run's database, opened by the first app that needs it (partner-app.ts). */
  notifications: Notifications | undefined;
  contracts: SurfaceContract[] | undefined;
  /** surface → operationId → statuses seen in its responses. */
  exercised: Map<Surface, Map<string, Set<number>>>;
  /** Event kinds whose payloads were checked against the spec (event-contract.ts). */
  eventTypesSeen: Set<string>;
}

const KEY = Symbol.for('study-companion-api/test-run-state');
const holder = globalThis as typeof globalThis & { [KEY]?: RunState };

export const runState: RunState = (holder[KEY] ??= { database: undefined, notifications: undefined, contracts: undefined, exercised: new Map(), eventTypesSeen: new Set() });
