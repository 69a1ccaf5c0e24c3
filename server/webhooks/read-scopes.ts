// Which OAuth scope lets an app (a client with a live grant from the student) receive an event: the read scope of
// the event's resource, as the spec's `webhooks` tag states. The one place this mapping lives in code.
import type { EventType } from '../events/emit.ts';

const READ_SCOPE_BY_RESOURCE: Record<string, string> = {
  task: 'tasks:read',
  exam: 'exams:read',
  payment: 'profile:read',
  user: 'profile:read',
};

export function readScopeOf(type: EventType | string): string {
  const scope = READ_SCOPE_BY_RESOURCE[type.split('.')[0]!];
  if (!scope) throw new Error(`no read scope is defined for events of kind ${type}`);
  return scope;
}
