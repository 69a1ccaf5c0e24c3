// The bounds of the account export (exportMyAccount), so that no student, and no number of students, can take the
// database from the others by downloading:
//   - one export at a time per student, in every process (a lease row, db/queries/export-leases.ts), taken before
//     anything else; after GitHub, which builds one migration archive of an account at a time;
//   - a few exports reading the database at once per process (`maxReading`, well under the pool's 10 connections),
//     so that many students exporting together still leave the pool to the API;
//   - the download itself holds no connection: the database is read into a temporary file at its own speed and the
//     client reads that file at its own (server/http/spool.ts);
//   - a client that reads nothing for `stallMs`, or has not finished after `maxDurationMs`, is cut off.
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { DEFAULT_EXPORT_SETTINGS, type ExportSettings } from './export-settings.ts';
import { releaseExportLease, renewExportLease, takeExportLease } from '../../db/queries/export-leases.ts';

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

/** A student's export lease while its download runs: renewed in the background, ended by `release()`. */
export interface HeldLease {
  release(): Promise<void>;
}

/**
 * The student's export lease, or how many seconds until the current holder's lease expires. While held it is renewed
 * three times per lease time, so it outlives a slow renewal; a renewal that fails is logged and the download goes on
 * (the lease then expires on its own, at worst letting a second export start).
 */
export async function holdExportLease(
  db: Db,
  userId: string,
  leaseSeconds: number,
  log: Logger,
): Promise<HeldLease | { retryAfterSeconds: number }> {
  const holder = randomUUID();
  const lease = await takeExportLease(db, userId, holder, leaseSeconds);
  if (!lease.taken) return { retryAfterSeconds: lease.retryAfterSeconds };
  const renewal = setInterval(
    () => {
      renewExportLease(db, userId, holder, leaseSeconds).then(
        (renewed) =>
          renewed || log.warn('the export lease expired before its renewal; another export of this student may start'),
        (error: unknown) => log.warn({ err: error }, 'the export lease could not be renewed; it expires on its own'),
      );
    },
    (leaseSeconds * 1000) / 3,
  );
  renewal.unref();
  let released: Promise<void> | undefined;
  return {
    release() {
      clearInterval(renewal);
      released ??= releaseExportLease(db, userId, holder).catch((error: unknown) =>
        log.warn({ err: error }, 'the export lease could not be released; it expires on its own'),
      );
      return released;
    },
  };
}
