// The account export's reading side (AccountExport in the spec): the student's one lease, a reading slot of this
// process, and the document written from one database snapshot into a temporary file (a spool) at the database's
// speed, so that the pool connection is given back when the reading ends, not when the client has downloaded. How
// the file reaches the client is the caller's (exportMyAccount sends it as it grows); the bounds are
// export-limits.ts's.
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { EXPORT_SECTIONS, exportPages, exportUser, inExportSnapshot } from '../../db/queries/export.ts';
import { LimitError, NotFoundError, UnavailableError } from '../../domain/errors.ts';
import { EXPORTS_AT_ONCE } from '../../domain/bounds.ts';
import { openSpool, type Spool } from '../../server/http/spool.ts';
import type { AccountLeases } from '../leases/account-leases.ts';
import { holdExportLease, type ExportLimits } from './export-limits.ts';

/** The layout version of the export document (AccountExport.format_version). */
const EXPORT_FORMAT_VERSION = '1';

export interface StartedExport {
  /** The document as it is written; `started()` rejects with a problem when the reading failed before its first byte. */
  spool: Spool;
  exportedAt: Date;
  /**
   * Stops a reading still under way (at its next write), waits for it and gives the student's lease back, so that a
   * next export sent once this one is seen to end finds the lease free. Safe to call more than once.
   */
  free(): Promise<void>;
}

/**
 * Takes the student's lease (a problem with Retry-After while another export of theirs runs) and a reading slot (a
 * 503 problem when every slot reads), then starts writing the document into a spool. What was taken is given back
 * when starting fails; once started, by `free()`.
 */
export async function startAccountExport(
  db: Db,
  { leases, limits }: { leases: AccountLeases; limits: ExportLimits },
  userId: string,
  now: () => Date,
  log: Logger,
): Promise<StartedExport> {
  const { settings } = limits;
  const lease = await holdExportLease(leases, userId, log);
  if ('retryAfterSeconds' in lease) {
    const detail = `An export of this account is already running; one runs at a time. Retry in ${lease.retryAfterSeconds} seconds.`;
    throw new LimitError('export_in_progress', detail, {
      max: EXPORTS_AT_ONCE,
      retryAfterSeconds: lease.retryAfterSeconds,
    });
  }
  try {
    const slot = limits.tryRead();
    if (!slot)
      throw new UnavailableError(`Every export slot of this server is reading (${settings.maxReading} at once).`);
    let spool: Spool;
    try {
      spool = await openSpool(settings.spoolMaxBytes);
    } catch (error) {
      slot.release();
      throw error;
    }
    const exportedAt = now();
    const reading = writeAccountExport(db, userId, exportedAt, spool)
      .then(
        (found) => (found ? spool.end() : spool.fail(new NotFoundError('This account no longer exists.'))),
        (error: unknown) => spool.fail(error),
      )
      .finally(() => slot.release());
    const free = async () => {
      try {
        await spool.close();
        await reading;
      } finally {
        await lease.release();
      }
    };
    return { spool, exportedAt, free };
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** Writes the document to `out` from one snapshot (db/queries/export.ts); false when the account no longer exists. */
function writeAccountExport(db: Db, userId: string, exportedAt: Date, out: Pick<Spool, 'write'>): Promise<boolean> {
  return inExportSnapshot(db, async (reader) => {
    const user = await exportUser(reader, userId);
    if (!user) return false;
    await out.write(
      `{"format_version":"${EXPORT_FORMAT_VERSION}","exported_at":${JSON.stringify(exportedAt)},"user":${JSON.stringify(user)}`,
    );
    for (const section of EXPORT_SECTIONS) {
      await out.write(`,"${section.name}":[`);
      let separator = '';
      for await (const rows of exportPages(section, reader, userId)) {
        await out.write(separator + rows.map((row) => JSON.stringify(row)).join(','));
        separator = ',';
      }
      await out.write(']');
    }
    await out.write('}');
    return true;
  });
}
