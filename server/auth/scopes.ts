// Scope enforcement: the spec lists, per operation, the scopes its security requirements need; a credential
// must hold all of them. Tokens and personal keys are judged alike.
import { readFileSync } from 'node:fs';
import type { Operation } from 'openapi-backend';
import { bundledSpecFile } from '../contract/bundled-specs.ts';
import { problems } from '../http/problems.ts';
import type { GeneralPrincipal, Scope } from './principal.ts';
import { REALM } from './realm.ts';

/** Every scope, in the order of the spec's `Scope` enum. */
export const ALL_SCOPES: readonly Scope[] = JSON.parse(readFileSync(bundledSpecFile('general'), 'utf8')).components
  .schemas.Scope.enum;

/** The scopes an operation needs: the union of its requirements' lists (the spec gives every scheme the same). */
export function requiredScopes(operation: Operation): string[] {
  const required = new Set<string>();
  for (const requirement of operation.security ?? []) {
    for (const scopes of Object.values(requirement)) for (const scope of scopes) required.add(scope);
  }
  return [...required];
}

/** Throws 403 insufficient_scope unless the principal holds every scope in `required`. */
export function requireScopes(principal: GeneralPrincipal, required: readonly string[]): void {
  if (required.every((scope) => principal.scopes.includes(scope as never))) return;
  throw problems.insufficientScope(required, principal.scopes, REALM);
}

/** Throws 403 insufficient_scope, naming them all, unless the principal holds at least one scope in `wanted`. */
export function requireAnyScope(principal: GeneralPrincipal, wanted: readonly string[]): void {
  if (wanted.some((scope) => principal.scopes.includes(scope as never))) return;
  throw problems.insufficientScope(wanted, principal.scopes, REALM);
}

/** Each operation's required scopes, found once: the definition never changes. */
const requiredByOperation = new WeakMap<Operation, string[]>();

export function authorizeScopes(principal: GeneralPrincipal, operation: Operation): void {
  let required = requiredByOperation.get(operation);
  if (!required) requiredByOperation.set(operation, (required = requiredScopes(operation)));
  requireScopes(principal, required);
}
