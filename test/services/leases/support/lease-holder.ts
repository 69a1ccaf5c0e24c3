// A process that holds one lease and nothing else, for the lease tests to kill with SIGKILL: it takes a lease of
// `kind` for the account, says `held <id>` on stdout and renews it until it dies.
// Usage: node --import tsx lease-holder.ts <database url> <user id> <kind> <limit> <ttl ms>
import { pino } from 'pino';
import { connect } from '../../../../db/connect.ts';
import { notificationsFor } from '../../../../db/notifications.ts';
import { accountLeases } from '../../../../services/leases/account-leases.ts';

const [url, userId, kind, limit, ttlMs] = process.argv.slice(2) as [string, string, string, string, string];
const db = connect({ databaseUrl: url });
const notifications = notificationsFor(db, url, { logger: pino({ level: 'silent' }), timeoutMs: 5_000 });
const leases = accountLeases(db, notifications, { ttlMs: Number(ttlMs), onError: (error) => console.error(error) });
const taken = await leases.take({ user_id: userId }, { kind, limit: Number(limit) }, (why) =>
  console.log(`lost ${why}`),
);
console.log('id' in taken ? `held ${taken.id}` : `refused ${taken.refused}`);
// Renewals are unref'd timers: this keeps the process alive until it is killed.
setInterval(() => {}, 60_000);
