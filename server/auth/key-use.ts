// `last_used_at` of an API key is a hint for its owner, so each process writes it at most once a minute per key,
// in the background: a failed write is logged and never fails the request.
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { markApiKeyUsed } from '../../db/queries/api-keys.ts';

const TOUCH_INTERVAL_MS = 60_000;

export function keyUseRecorder(db: Db, logger: Logger, now: () => Date) {
  const lastTouched = new Map<string, number>();
  return (key: { id: string; prefix: string }): void => {
    const at = now();
    if (at.getTime() - (lastTouched.get(key.id) ?? 0) < TOUCH_INTERVAL_MS) return;
    lastTouched.set(key.id, at.getTime());
    markApiKeyUsed(db, key.id, at).catch((error) =>
      logger.warn({ err: error, key: key.prefix }, 'could not record key use'),
    );
  };
}
