// What an authorization request that names no scope is granted: everything the client may have, except the scopes an
// app must ask for by name, so that the consent page says so in words (docs/authentication.md's and the spec's promise
// for `account:export`: "download a copy of all your data" is never granted by leaving `scope` out).
export const SCOPES_ASKED_FOR_BY_NAME: readonly string[] = ['account:export'];

/** The scopes granted when a request names none: the client's, without those asked for by name only. */
export function defaultScopes(clientScopes: readonly string[]): string[] {
  return clientScopes.filter((scope) => !SCOPES_ASKED_FOR_BY_NAME.includes(scope));
}
