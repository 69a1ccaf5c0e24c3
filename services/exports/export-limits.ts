// The bounds of the account export (exportMyAccount), so that no student, and no number of students, can take the
// database from the others by downloading:
//   - one export at a time per student, in every process (an `export` lease, services/leases/), taken before
//     anything else; after GitHub, which builds one migration archive of an account at a time;
//   - a few exports reading the database at once per process (`maxReading`, well under the pool's 10 connections),
//     so that many students exporting together still leave the pool to the API;
//   - the download itself holds no connection: the database is read into a temporary file at its own speed and the
//     client reads that file at its own (server/http/spool.ts);
//   - a client that reads nothing for `stallMs`, or has not finished after `maxDurationMs`, is cut off.
import type { Logger } from 'pino';
import { DEFAULT_EXPORT_SETTINGS, type ExportSettings } from './export-settings.ts';
import type { AccountLeases } from '../leases/account-leases.ts';
import { EXPORTS_AT_ONCE } from '../../domain/bounds.ts';

/** A held reading slot; `release()` frees it (a second call does nothing). */
export interface ReadingSlot {
  release(): void;
}

export interface ExportLimits {
  readonly settings: ExportSettings;
  /** A reading slot now, or undefined when `maxReading` exports are reading. */
  tryRead(): ReadingSlot | undefined;
  /** Exports reading the database now. */
  readonly reading: number;
}

export function createExportLimits(settings: Partial<ExportSettings> = {}): ExportLimits {
  const all = { ...DEFAULT_EXPORT_SETTINGS, ...settings };
  let reading = 0;
  return {
    settings: all,
    tryRead() {
      if (reading >= all.maxReading) return undefined;
      reading++;
      let held = true;
      return {
        release() {
          if (held) reading--;
          held = false;
        },
      };
    },
    get reading() {
      return reading;
    },
  };
}

/** A student's export lease while its download runs: renewed with the process's other leases, ended by `release()`. */
export interface HeldLease {
  release(): Promise<void>;
}

/**
 * The student's export lease, or how many seconds until the current holder's lease lapses. A lease lost while the
 * download runs (its renewal came too late) is logged and the download goes on, at worst letting a second export start.
 */
export async function holdExportLease(
  leases: AccountLeases,
  userId: string,
  log: Logger,
): Promise<HeldLease | { retryAfterSeconds: number }> {
  const lease = await leases.take({ user_id: userId }, { kind: 'export', limit: EXPORTS_AT_ONCE }, (why) =>
    log.warn({ why }, 'the export lease was lost before the download ended; another export of this student may start'),
  );
  if ('refused' in lease) return { retryAfterSeconds: Math.max(1, Math.ceil(lease.retryAfterMs / 1000)) };
  return lease;
}
