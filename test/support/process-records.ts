// What each test process exercised, kept in a file of the run's directory: in parallel mode every worker process
// runs only some of the files, so the contract coverage gate can only be judged over all of them together, once the
// workers have ended (run-gate.ts). A record also names the process's throwaway database on PostgreSQL: a worker is
// ended with process.exit, so it cannot drop its database itself, and the run's end drops it instead.
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runState } from './run-state.ts';

/** The run's directory of records, made by the global setup (run-gate.ts) and inherited by the workers. */
export const RECORDS_DIRECTORY_VARIABLE = 'TEST_RUN_RECORDS';

interface ProcessRecord {
  pid: number;
  databaseUrl: string | undefined;
  /** The test files this process ran. */
  files: string[];
  /** surface → operationId → statuses seen. */
  exercised: Record<string, Record<string, number[]>>;
  eventTypesSeen: string[];
}

/** The union of every process's records. */
export interface RunRecords {
  files: Set<string>;
  exercised: Map<string, Map<string, Set<number>>>;
  eventTypesSeen: Set<string>;
  /** The throwaway databases of processes other than this one. */
  otherDatabaseUrls: string[];
}

/** Writes (or rewrites) this process's record; nothing when the run has no directory of records. */
export function writeProcessRecord(): void {
  const directory = process.env[RECORDS_DIRECTORY_VARIABLE];
  if (!directory) return;
  const record: ProcessRecord = {
    pid: process.pid,
    databaseUrl: runState.database?.url,
    files: [...runState.filesRun],
    exercised: Object.fromEntries(
      [...runState.exercised].map(([surface, operations]) => [
        surface,
        Object.fromEntries([...operations].map(([id, statuses]) => [id, [...statuses]])),
      ]),
    ),
    eventTypesSeen: [...runState.eventTypesSeen],
  };
  mkdirSync(directory, { recursive: true });
  // Written whole, then renamed: a process that dies while writing leaves its previous record, never half of one.
  const file = join(directory, `${process.pid}.json`);
  writeFileSync(`${file}.partial`, JSON.stringify(record));
  renameSync(`${file}.partial`, file);
}

export function readRunRecords(directory: string): RunRecords {
  const union: RunRecords = {
    files: new Set(),
    exercised: new Map(),
    eventTypesSeen: new Set(),
    otherDatabaseUrls: [],
  };
  for (const name of readdirSync(directory).filter((n) => n.endsWith('.json'))) {
    const record = JSON.parse(readFileSync(join(directory, name), 'utf8')) as ProcessRecord;
    for (const file of record.files) union.files.add(file);
    for (const type of record.eventTypesSeen) union.eventTypesSeen.add(type);
    for (const [surface, operations] of Object.entries(record.exercised)) {
      const seen = union.exercised.get(surface) ?? union.exercised.set(surface, new Map()).get(surface)!;
      for (const [id, statuses] of Object.entries(operations))
        seen.set(id, new Set([...(seen.get(id) ?? []), ...statuses]));
    }
    if (record.databaseUrl && record.pid !== process.pid) union.otherDatabaseUrls.push(record.databaseUrl);
  }
  return union;
}
