// The options every command that registers an OAuth client takes (clients create, institutions create), checked once.
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { redirectUriProblem } from '../../server/oauth/clients.ts';
import { UsageError } from './shared.ts';

/** Each --redirect-uri given, refused with the reason when one is not a redirect URI the service accepts. */
export function redirectUrisOption(given: string[] | undefined): string[] {
  const uris = given ?? [];
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new UsageError(`--redirect-uri ${problem}, got ${JSON.stringify(uri)}`);
  }
  return uris;
}

/** --scopes "a b" or "a,b": every scope when absent; an unknown one is refused with the list of known ones. */
export function scopesOption(given: string | undefined): string[] {
  const scopes = given ? given.split(/[\s,]+/).filter(Boolean) : [...ALL_SCOPES];
  const unknown = scopes.filter((s) => !ALL_SCOPES.includes(s as never));
  if (unknown.length > 0)
    throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes are: ${ALL_SCOPES.join(' ')}`);
  return scopes;
}
