// The defaults of the Redis limit stores alone, in a module that imports nothing: the configuration names them, and
// every CLI call loads the configuration, which should not load the limiters and the metrics for two constants.
export const DEFAULT_REDIS_KEY_PREFIX = 'rl:';
export const DEFAULT_REDIS_TIMEOUT_MS = 1_000;
