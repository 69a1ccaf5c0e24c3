// How webhook deliveries are made, as the operator configures it (WEBHOOK_* settings, app/config.ts).
export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS=1: endpoints may be plain http and resolve to private or loopback addresses. */
  allowPrivateTargets: boolean;
  /** One attempt, connect to response, in ms (10 s; tests shorten it). */
  attemptTimeoutMs: number;
  /** Test-only: multiplies every retry delay and the three days after which a failing endpoint is disabled. */
  retryScale: number;
  /** Attempts one process makes at once (attempt-slots.ts): network waits, so hundreds. */
  attemptsPerProcess: number;
  /** How often a worker looks for due deliveries and new events, in ms. */
  pollMs: number;
}
