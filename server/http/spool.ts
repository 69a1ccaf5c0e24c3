// A download's bytes kept in a temporary file between the one who produces them (the database, at its own speed) and
// the client (at its own speed): what producing holds (a pool connection, a snapshot) is held for the time the
// database takes to read, not for the time the client takes to download. The client is sent bytes as soon as they are
// in the file, so a download still starts at once.
//
// The file's name is removed as soon as it is open: the file lives as long as its descriptor, so a crash, a kill or a
// forgotten close cannot leave it on the disk. It holds at most `maxBytes` not yet sent: a producer that gets that far
// ahead of its client waits until the client has caught up, then the file starts again from its beginning.
import { randomUUID } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a producer meets when it writes to a spool whose client has gone: it should stop producing. */
export class SpoolClosed extends Error {
  constructor() {
    super('the download this spool fed has ended');
  }
}

export interface Spool {
  /** Producer: appends `chunk`; waits while `maxBytes` are not yet sent; throws SpoolClosed once the spool is closed. */
  write(chunk: string): Promise<void>;
  /** Producer: nothing more will be written; the client gets the rest and its end. */
  end(): void;
  /** Producer: producing failed; the client's next read throws `error`. */
  fail(error: unknown): void;
  /** Client: resolves once the first bytes are written or the spool ended; rejects when producing failed first. */
  started(): Promise<void>;
  /** Client: every byte written, as it is written; throws the producer's failure. */
  chunks(): AsyncGenerator<Buffer>;
  /** Frees the file; a producer still writing gets SpoolClosed. Safe to call more than once. */
  close(): Promise<void>;
}

/** How much the client is given per read of the file. */
const READ_BYTES = 64 * 1024;

export async function openSpool(maxBytes: number, directory = tmpdir()): Promise<Spool> {
  const path = join(directory, `study-companion-download-${randomUUID()}`);
  const file = await open(path, 'wx+', 0o600);
  try {
    await unlink(path);
  } catch (error) {
    await file.close();
    throw error;
  }
  let written = 0;
  let sent = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  let closed: Promise<void> | undefined;
  /** The client waiting for bytes, an end or a failure. */
  let wakeClient: (() => void) | undefined;
  /** The producer waiting for the client to catch up. */
  let wakeProducer: (() => void) | undefined;

  const notifyClient = () => {
    const wake = wakeClient;
    wakeClient = undefined;
    wake?.();
  };
  const clientWaits = () => new Promise<void>((resolve) => (wakeClient = resolve));

  return {
    async write(chunk) {
      if (closed) throw new SpoolClosed();
      const bytes = Buffer.from(chunk, 'utf8');
      if (written > 0 && written + bytes.length > maxBytes) {
        await new Promise<void>((resolve) => {
          wakeProducer = resolve;
          notifyClient();
        });
        if (closed) throw new SpoolClosed();
      }
      await file.write(bytes, 0, bytes.length, written);
      written += bytes.length;
      notifyClient();
    },
    end() {
      ended = true;
      notifyClient();
    },
    fail(error) {
      failure ??= { error };
      notifyClient();
    },
    async started() {
      while (written === 0 && !ended && !failure && !closed) await clientWaits();
      if (failure) throw failure.error;
    },
    async *chunks() {
      for (;;) {
        if (failure) throw failure.error;
        if (closed) return;
        if (sent < written) {
          const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, written - sent));
          const { bytesRead } = await file.read(buffer, 0, buffer.length, sent);
          sent += bytesRead;
          yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
          continue;
        }
        if (ended) return;
        if (wakeProducer) {
          // Everything written is sent: the file starts again, so it never holds more than maxBytes.
          await file.truncate(0);
          written = sent = 0;
          const wake = wakeProducer;
          wakeProducer = undefined;
          wake();
          continue;
        }
        await clientWaits();
      }
    },
    close() {
      closed ??= (async () => {
        notifyClient();
        const wake = wakeProducer;
        wakeProducer = undefined;
        wake?.();
        await file.close(); // after any read or write in flight
      })();
      return closed;
    },
  };
}
