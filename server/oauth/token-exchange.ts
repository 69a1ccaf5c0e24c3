// Institutional access: OAuth 2.0 Token Exchange (RFC 8693) as an extension grant of the token endpoint, designed
// after GitHub App installation tokens. An institution (a confidential client of kind 'institution', `npm run cli --
// institutions create`) authenticates as itself and names ONE student; when that student has a live grant to it
// (given on the ordinary consent page of /oauth/authorize), it gets a 10-minute access token acting for the student
// with at most the scopes the student granted, and no refresh token: it exchanges again when it needs more.
//
// The student is named by `subject_token` (RFC 8693 §2.1: the party on whose behalf the token is requested) with our
// own `subject_token_type`, not by `resource`/`audience`, which name where the token is to be used (always this API).
// The subject token is no security token here, only a name, as an installation id is in GitHub's URL: what
// authorizes the exchange is the client's own credential plus the student's consent grant. The token issued names
// that grant (`sid`), as every access token does, so revoking the grant (DELETE /api/users/me/authorizations/{id},
// or `institutions revoke`) stops it on its next request.
import OAuth2Server, {
  AbstractGrantType,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  OAuthError,
} from '@node-oauth/oauth2-server';
import type { Db } from '../../db/connect.ts';
import { findLiveGrants } from '../../db/queries/oauth.ts';
import type { AccessTokenIssuer } from '../auth/access-tokens.ts';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** Ours (RFC 8693 §3 allows any URI): the subject token is a student's id, the `id` of GET /api/users/me. */
export const STUDENT_ID_TOKEN_TYPE = 'urn:study-companion:params:oauth:token-type:student-id';
/** The one kind of token issued (RFC 8693 §3), in the response's `issued_token_type`. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** Short, as GitHub's installation tokens are short: the institution exchanges again rather than keeping a token. */
export const EXCHANGED_TOKEN_TTL_SECONDS = 10 * 60;

/**
 * One answer for a student who does not exist, never consented, or revoked: the institution learns nothing about
 * who has an account here. Malformed ids get it too, without a query.
 */
const NOT_GRANTED = 'The subject has not granted this client access, or revoked it.';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** RFC 8693 §2.2.2's error for a `resource` or `audience` the server does not know. */
export class InvalidTargetError extends OAuthError {
  constructor(message: string) {
    super(message, { code: 400, name: 'invalid_target' });
  }
}

/**
 * The first `audience` or `resource` value (each may be repeated, RFC 8693 §2.1) that names anything but this API:
 * an audience is the tokens' own (`aud`, the issuer's /api) or the issuer; a resource is an absolute URI at the API.
 */
function unknownTargetOf(body: Record<string, unknown>, tokens: AccessTokenIssuer): string | undefined {
  const values = (name: string) =>
    [body[name]]
      .flat()
      .filter((value) => value !== undefined)
      .map(String);
  const audiences = new Set([tokens.audience, tokens.issuer]);
  const atApi = (uri: string) => uri === tokens.audience || uri.startsWith(`${tokens.audience}/`);
  return (
    values('audience').find((audience) => !audiences.has(audience)) ??
    values('resource').find((resource) => !atApi(resource))
  );
}

/** The grant type class the library instantiates per request, bound to the database and the token issuer. */
export function tokenExchangeGrantType(db: Db, tokens: AccessTokenIssuer): typeof AbstractGrantType {
  return class TokenExchangeGrantType extends AbstractGrantType {
    async handle(request: OAuth2Server.Request, client: OAuth2Server.Client) {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const subject = body.subject_token;
      if (typeof subject !== 'string' || !subject)
        throw new InvalidRequestError("Missing parameter: `subject_token` (the student's id)");
      if (body.subject_token_type !== STUDENT_ID_TOKEN_TYPE) {
        throw new InvalidRequestError(`Invalid parameter: \`subject_token_type\` must be ${STUDENT_ID_TOKEN_TYPE}`);
      }
      if (body.requested_token_type !== undefined && body.requested_token_type !== ACCESS_TOKEN_TYPE) {
        throw new InvalidRequestError(
          `Invalid parameter: \`requested_token_type\`: only ${ACCESS_TOKEN_TYPE} is issued`,
        );
      }
      // Delegation (an actor acting for the subject) is not offered: the client itself is the only actor.
      if (body.actor_token !== undefined)
        throw new InvalidRequestError('Invalid parameter: `actor_token` is not supported');
      // RFC 8693 §2.2.2: a target the server does not know is `invalid_target`, never silently ignored (the client
      // would believe its token limited to, or valid at, a service it named).
      const unknownTarget = unknownTargetOf(body, tokens);
      if (unknownTarget)
        throw new InvalidTargetError(
          `Invalid target: \`${unknownTarget}\` is not this API; the only audience is ${tokens.audience}`,
        );

      const requested = this.getScope(request);
      // Checked before the student is looked up, so that this answer too says nothing about the student.
      if (requested && !requested.every((scope) => (client.scopes as string[]).includes(scope))) {
        throw new InvalidScopeError('Invalid scope: the scope asks for more than this client may have');
      }
      const studentId = subject.toLowerCase();
      const grants = UUID.test(studentId) ? await findLiveGrants(db, client.id, studentId) : [];
      if (grants.length === 0) throw new InvalidGrantError(NOT_GRANTED);
      // A student who consented more than once holds several grants; the newest that covers the scope asked for
      // is the one the token descends from (none asked for: the newest, with all it grants).
      const grant = requested ? grants.find((g) => requested.every((scope) => g.scopes.includes(scope))) : grants[0];
      if (!grant) throw new InvalidScopeError('Invalid scope: the scope asks for more than the student granted');
      const scope = requested ?? grant.scopes;

      const { token, expiresAt } = await tokens.issue({
        user_id: studentId,
        client_id: client.id,
        scopes: scope,
        grant_id: grant.id,
        lifetime_seconds: EXCHANGED_TOKEN_TTL_SECONDS,
      });
      // `issued_token_type` reaches the response as an extended token attribute (the router allows them for this
      // grant type only); no refresh token is issued.
      return {
        accessToken: token,
        accessTokenExpiresAt: expiresAt,
        scope,
        client,
        user: { id: studentId, grant_id: grant.id },
        issued_token_type: ACCESS_TOKEN_TYPE,
      };
    }
  };
}
