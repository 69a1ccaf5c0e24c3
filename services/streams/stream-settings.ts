// How long streams live and how often they beat, apart from the streams' code, so that the settings can name their
// defaults without loading it.
export interface StreamSettings {
  /** Between two heartbeat comments. */
  heartbeatMs: number;
  /** A stream ends after this long (`max_duration_reached`); the client reconnects with Last-Event-ID. */
  maxDurationMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { heartbeatMs: 15_000, maxDurationMs: 15 * 60_000 };
