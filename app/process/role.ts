// What a process started by app/main.ts does, chosen with `--role`:
//   all     (the default) serve the API and deliver webhooks (and sweep the study rooms: services/rooms/sweep.ts):
//           the embedded database and a plain `npm start` need no second process;
//   web     serve the API only (the events it writes wait in the outbox for a worker);
//   worker  deliver webhooks and sweep the study rooms only: no HTTP listener, any number of them beside any number
//           of web processes.
import { ConfigError } from '../../server/process/config-error.ts';

export type ProcessRole = 'all' | 'web' | 'worker';
const ROLES: readonly ProcessRole[] = ['all', 'web', 'worker'];

export function parseRole(args: string[]): ProcessRole {
  const at = args.findIndex((arg) => arg === '--role' || arg.startsWith('--role='));
  if (at === -1) return 'all';
  const value = args[at]!.includes('=') ? args[at]!.slice('--role='.length) : args[at + 1];
  if (!ROLES.includes(value as ProcessRole))
    throw new ConfigError(`--role must be one of ${ROLES.join(', ')}, got "${value ?? ''}"`);
  return value as ProcessRole;
}

export const servesHttp = (role: ProcessRole) => role !== 'worker';
export const deliversWebhooks = (role: ProcessRole) => role !== 'web';
