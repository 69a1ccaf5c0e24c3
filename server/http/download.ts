// Writing a large response as it is produced (a download: the account export), with the HTTP mechanics a producer
// must not forget: wait while the client's socket is full (memory stays bounded by one chunk), stop at once when the
// client goes away or stops reading, stop when the process stops, and end a failed response so the client can tell.
import type { ServerResponse } from 'node:http';

/** Why a download stopped before its end; none is the client's fault in the HTTP sense (the status is already sent). */
export class DownloadStopped extends Error {
  constructor(readonly reason: 'client_gone' | 'client_stalled' | 'too_long' | 'service_stopping') {
    super(`the download stopped: ${reason}`);
  }
}

export interface DownloadWriter {
  /** Writes `chunk`, then waits until the socket can take more; throws DownloadStopped when the download must stop. */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Ends the response complete. A failed download is ended with `res.destroy()` instead: the connection closes
   * without the chunked transfer's last chunk, so the client sees a truncated transfer, never a complete-looking body.
   * */
  end(): void;
}

export interface DownloadOptions {
  /** How long the client may read nothing while the socket is full before the download stops (it holds a snapshot). */
  stallMs: number;
  /** How long the whole download may last: a client that reads, but too slowly to ever finish, is cut off too. */
  maxDurationMs: number;
  /** Aborted when the process stops (Lifecycle.streamsEnd). */
  stop: AbortSignal;
}

export function downloadWriter(res: ServerResponse, options: DownloadOptions): DownloadWriter {
  const deadline = Date.now() + options.maxDurationMs;
  const stopped = (): DownloadStopped | undefined =>
    res.destroyed || res.writableEnded
      ? new DownloadStopped('client_gone')
      : options.stop.aborted
        ? new DownloadStopped('service_stopping')
        : Date.now() >= deadline
          ? new DownloadStopped('too_long')
          : undefined;
  return {
    async write(chunk) {
      const before = stopped();
      if (before) throw before;
      if (res.write(chunk)) return;
      await new Promise<void>((resolve, reject) => {
        const finish = (error?: DownloadStopped) => {
          clearTimeout(timer);
          res.off('drain', drained);
          res.off('close', closed);
          options.stop.removeEventListener('abort', stopping);
          if (error) reject(error);
          else resolve();
        };
        const drained = () => finish();
        const closed = () => finish(new DownloadStopped('client_gone'));
        const stopping = () => finish(new DownloadStopped('service_stopping'));
        const left = deadline - Date.now();
        const timer = setTimeout(
          () => finish(new DownloadStopped(left < options.stallMs ? 'too_long' : 'client_stalled')),
          Math.min(options.stallMs, left),
        );
        res.once('drain', drained);
        res.once('close', closed);
        options.stop.addEventListener('abort', stopping, { once: true });
      });
    },
    end() {
      res.end();
    },
  };
}
