// A setting the service cannot start with: start-up prints its message as one line (app/startup-errors.ts).
export class ConfigError extends Error {}
