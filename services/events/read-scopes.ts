// Which scope lets a credential see what an event kind carries: the read scope of its resource. A student subscribing
// an endpoint to a kind needs it (an endpoint is a way to read), and an app receives a kind only while its grant holds
// it.
import type { Scope } from '../../server/auth/principal.ts';
import type { EventType } from './emit.ts';

type Resource = EventType extends `${infer R}.${string}` ? R : never;

/**
 * By an event kind's resource (what comes before its dot). A new resource in the catalog fails to compile here until
 * it is given its scope.
 */
export const READ_SCOPES: Readonly<Record<Resource, Scope>> = {
  task: 'tasks:read',
  exam: 'exams:read',
  payment: 'profile:read',
  user: 'profile:read',
  room: 'rooms:read',
  deck: 'decks:read',
  card: 'decks:read',
  webhook: 'webhooks:manage',
};

export function readScopeOf(type: EventType): Scope {
  return READ_SCOPES[type.slice(0, type.indexOf('.')) as Resource];
}

/** The scopes needed to receive every kind in `types`, each once. */
export function readScopesOf(types: readonly EventType[]): Scope[] {
  return [...new Set(types.map(readScopeOf))];
}
