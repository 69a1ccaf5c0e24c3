// The delivery settings of the processes that deliver on one database must agree. Every delivering process takes any
// job of the one delivery queue, so a process that allows no private targets would take the jobs of endpoints that
// the others were started to reach (WEBHOOK_ALLOW_PRIVATE_TARGETS=1) and fail them, and a different attempt timeout
// would change the queue's expiry under the others' attempts. So a process refuses to start (one line, exit 1) when
// the live delivering processes on its database run with other settings; it joins them otherwise, keeps its
// registration live while it runs, and leaves at its stop. A process killed without a stop counts as live until its
// registration lapses (LIVE_MS). The embedded database has one process at most, and no such check.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import {
  joinDeliveryProcesses,
  leaveDeliveryProcesses,
  renewDeliveryProcess,
  type DeliverySettings,
} from '../../db/queries/delivery-processes.ts';
import { ConfigError } from '../../server/process/config-error.ts';
import type { WebhookConfig } from './delivery-config.ts';

/** How long a registration stays live unrenewed: a few renewals, so one slow statement does not lapse it. */
export const LIVE_MS = 30_000;
const RENEW_EVERY_MS = 10_000;

export interface DeliveryRegistration {
  /** Leaves the live processes (at the stop, once the last attempt has ended). */
  leave(): Promise<void>;
}

/** The settings that must agree, by their variables' names. */
export function deliverySettingsOf(config: WebhookConfig): DeliverySettings {
  return {
    WEBHOOK_ALLOW_PRIVATE_TARGETS: config.allowPrivateTargets ? '1' : '0',
    WEBHOOK_ATTEMPT_TIMEOUT_MS: String(config.attemptTimeoutMs),
    WEBHOOK_RETRY_SCALE: String(config.retryScale),
  };
}

/** Joins the live delivering processes, or throws a ConfigError naming the settings that differ. */
export async function joinDelivery(db: Db, config: WebhookConfig, logger: Logger): Promise<DeliveryRegistration> {
  const id = randomUUID();
  const settings = deliverySettingsOf(config);
  const at = () => {
    const now = new Date();
    return { id, settings, now, liveUntil: new Date(now.getTime() + LIVE_MS) };
  };
  const joined = await joinDeliveryProcesses(db, at());
  if (!joined.joined) {
    const differ = Object.keys(settings).filter((name) => joined.theirs[name] !== settings[name]);
    const show = (of: DeliverySettings) => differ.map((name) => `${name}=${of[name] ?? '(unset)'}`).join(' ');
    throw new ConfigError(
      `webhook delivery settings differ from the ${joined.processes} delivering process(es) live on this database ` +
        `(theirs: ${show(joined.theirs)}; this one: ${show(settings)}): every process takes any delivery job, ` +
        `so start this one with theirs, or stop them first ` +
        `(one killed without a stop counts as live for ${LIVE_MS / 1000} s)`,
    );
  }
  const renew = () =>
    renewDeliveryProcess(db, at()).catch((error: unknown) =>
      logger.warn({ err: error }, 'could not renew this delivering process; trying again'),
    );
  const renewing = setInterval(() => void renew(), RENEW_EVERY_MS).unref();
  return {
    async leave() {
      clearInterval(renewing);
      await leaveDeliveryProcesses(db, id).catch((error: unknown) =>
        logger.warn({ err: error }, `could not leave the delivering processes; it lapses in ${LIVE_MS / 1000} s`),
      );
    },
  };
}
