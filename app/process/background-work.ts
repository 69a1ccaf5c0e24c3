// The work a process does beside serving requests, whatever its role: the one LISTEN connection, and for a role that
// delivers, webhook delivery and the study rooms' sweep.
import { sessionUrlOf, type Db } from '../../db/connect.ts';
import { notificationsFor, type Notifications } from '../../db/notifications.ts';
import type { SecretBox } from '../../server/auth/secret-box.ts';
import type { LifecycleControl } from '../../server/process/lifecycle.ts';
import { startRoomSweep } from '../../services/rooms/sweep.ts';
import { joinDelivery } from '../../services/webhooks/delivery-settings.ts';
import { startDeliveryWorker } from '../../services/webhooks/worker.ts';
import type { ProcessContext } from './context.ts';

/** The worker's part: webhook delivery, and the study rooms' sweep (what their clock brings when nobody watches). */
export async function deliveryWorker(
  { config, logger, embedded }: ProcessContext,
  db: Db,
  lifecycle: LifecycleControl,
  box: SecretBox,
  notifications: Notifications,
) {
  // Refuses the start when the processes already delivering on this database run with other delivery settings.
  const registration = embedded ? undefined : await joinDelivery(db, config.webhooks, logger);
  const delivery = startDeliveryWorker({ db, box, config: config.webhooks, logger, lifecycle, notifications });
  const rooms = startRoomSweep({ db, lifecycle, logger });
  return {
    stop: async () => {
      await Promise.all([delivery.stop(), rooms.stop()]);
      await registration?.leave();
    },
  };
}

/**
 * The one LISTEN connection of the process (NOTIFY from any process's commits), for every role. LISTEN needs a
 * session, so it bypasses a transaction pooler.
 */
export function listenForNotifications({ config, logger }: ProcessContext, db: Db): Notifications {
  const listenUrl = 'databaseUrl' in config.database ? sessionUrlOf(config.database) : undefined;
  return notificationsFor(db, listenUrl, { logger, timeoutMs: config.databaseTimeouts.connectMs });
}
