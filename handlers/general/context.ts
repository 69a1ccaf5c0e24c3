// What the general surface gives its handlers beyond every surface's context: the services its operations share with
// the CLI and the worker, built once by the composition root (app/general.ts).
import type { Notifications } from '../../db/notifications.ts';
import type { AiQueue } from '../../services/ai/queue.ts';
import type { Tutor } from '../../services/ai/tutor/types.ts';
import type { OpenStreams } from '../../services/streams/open-streams.ts';
import type { ReadinessGroups } from '../../services/readiness/readiness-groups.ts';
import type { StreamSettings } from '../../services/streams/stream-settings.ts';
import type { ExportLimits } from '../../services/exports/export-limits.ts';
import type { AccountLeases } from '../../services/leases/account-leases.ts';
import type { WebhookEndpointSettings } from '../../services/webhooks/endpoint-settings.ts';
import type { AuthFailureLimit } from '../../server/auth/auth-failure-limit.ts';
import type { PasswordAttempts } from '../../server/auth/password-attempts.ts';
import type { SecretBox } from '../../server/auth/secret-box.ts';
import type { HandlerContext } from '../../server/contract/handler-types.ts';
import type { TakeMoreRequests } from '../../server/limits/rate-limits.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';

export interface GeneralContext extends HandlerContext {
  /** The AI tutor (from AI_* settings, else the built-in local tutor). */
  tutor: Tutor;
  /** The secret payment provider events are signed with (PAYMENT_PROVIDER_SECRET); absent: none are accepted. */
  paymentProviderSecret?: string;
  /** The AI generation slots and the accounts' places in them (AI_MAX_*). */
  aiQueue: AiQueue;
  /** The account export's bounds (EXPORT_*). */
  exports: ExportLimits;
  /** What each account holds over time (its streams, its export), one leased row each, bounded across processes. */
  leases: AccountLeases;
  /**
   * The live streams: their timing, the account's open-stream places (one bound for every kind of stream), and the
   * readiness streams of this process grouped by student, and the notifications between processes (the room streams').
   */
  streams: { settings: StreamSettings; open: OpenStreams; readiness: ReadinessGroups; notifications: Notifications };
  /** Where webhook endpoints may point, and the box that seals their signing secrets. */
  webhooks: WebhookEndpointSettings;
  /** Seals what the service keeps but must not keep in the clear (SECRETS_KEY): a new personal key kept for a retry. */
  secrets: SecretBox;
  /** The count of failed authentications per address: a calendar feed's unknown token counts as one. */
  authFailures: AuthFailureLimit;
  /** The count of password checks per account. */
  passwordAttempts: PasswordAttempts;
  /**
   * Counts more requests against the account's request limits for one let through that stands for several: a sync
   * push pays one request per command, as the REST operations they mirror would.
   */
  takeMoreRequests: TakeMoreRequests<GeneralPrincipal>;
  /** The service's public base URL (PUBLIC_URL, the OAuth issuer): where calendar feed URLs point. */
  publicUrl: string;
}
