// The bounds of account exports, apart from the code that holds them, so that the settings can name their defaults
// without loading it.
export interface ExportSettings {
  /** Exports reading the database at once in this process; one more is refused (503, Retry-After). */
  maxReading: number;
  /** A client that takes nothing from its socket for this long is cut off. */
  stallMs: number;
  /** A download that has not ended after this long is cut off, however it reads. */
  maxDurationMs: number;
  /** The most the temporary file holds beyond what the client has read; past it the reading waits for the client. */
  spoolMaxBytes: number;
}

export const DEFAULT_EXPORT_SETTINGS: ExportSettings = {
  maxReading: 2,
  stallMs: 60_000,
  maxDurationMs: 30 * 60_000,
  spoolMaxBytes: 64 * 1024 * 1024,
};
