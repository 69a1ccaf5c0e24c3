// The OAuth 2.0 authorization server's endpoints, outside the OpenAPI paths because their wire format is OAuth's
// own (form bodies, RFC 6749 error objects); the general spec describes them in its OAuth2 security scheme.
//   GET/POST /oauth/authorize  sign-in and consent page; authorization code with PKCE S256 (required)
//   POST /oauth/token          authorization_code, refresh_token (rotating), client_credentials, and for
//                              institutions token exchange (RFC 8693, token-exchange.ts); failed client
//                              authentication bounded per client and address (client-auth-limit.ts)
//   POST /oauth/revoke         RFC 7009
//   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
//   GET  /oauth/jwks.json      the access-token signing keys
import OAuth2Server, {
  OAuthError,
  Request as OAuthRequest,
  Response as OAuthResponse,
} from '@node-oauth/oauth2-server';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { findCredentials } from '../../db/queries/profile.ts';
import { ACCESS_TOKEN_TTL_SECONDS, type AccessTokenIssuer } from '../auth/access-tokens.ts';
import { verifyNothing, verifyPassword } from '../auth/passwords.ts';
import { dependencyFailure, logDependencyFailure, RETRY_AFTER_SECONDS } from '../http/problems.ts';
import { hashSecret } from '../auth/secret-hash.ts';
import { unstorableText } from '../http/input-guard.ts';
import type { FieldError } from '../../domain/errors.ts';
import type { LimitStores } from '../limits/rate-limits.ts';
import { clientAuthLimit, countClientAuthFailure } from './client-auth-limit.ts';
import { failureThrottle } from './failure-throttle.ts';
import { renderErrorPage, renderLoginPage } from './login-page.ts';
import { AUTHORIZATION_CODE_TTL_SECONDS, oauthModel, REFRESH_TOKEN_TTL_SECONDS, type GrantUser } from './model.ts';
import { revokeToken } from './revocation.ts';
import { TOKEN_EXCHANGE_GRANT, tokenExchangeGrantType } from './token-exchange.ts';

export interface OAuthDeps {
  db: Db;
  tokens: AccessTokenIssuer;
  logger: Logger;
  limitStores: LimitStores;
  now: () => Date;
  /** Scope → description, from the general spec's OAuth2 security scheme. */
  scopes: Record<string, string>;
  bodyLimitBytes: number;
}

const UNAVAILABLE_DESCRIPTION = `The service is temporarily unavailable; try again in ${RETRY_AFTER_SECONDS} seconds.`;

/** What a client is told of a failure on our side; the log has the rest, under the request id. */
const SERVER_ERROR_DESCRIPTION = 'The authorization server failed; try again later.';

/** The RFC 6749 §5.2 error object; an error of ours (5xx) is `server_error` without its internal message. */
function tokenError(error: OAuthError): { error: string; error_description: string } {
  return error.code >= 500
    ? { error: 'server_error', error_description: SERVER_ERROR_DESCRIPTION }
    : { error: error.name, error_description: error.message };
}

/** Failed sign-ins allowed per client address in 15 minutes, against password guessing. */
const SIGN_IN_ATTEMPTS_PER_ADDRESS = 20;
/**
 * Failed sign-ins allowed per account (e-mail) in 15 minutes, from all addresses together. Lower than per address:
 * the owner mistypes a few times at most; the price is that a stranger can hold an account's sign-in page shut for
 * 15 minutes (its existing sessions and keys keep working).
 */
const SIGN_IN_ATTEMPTS_PER_ACCOUNT = 10;

export function oauthRoutes(deps: OAuthDeps): express.Router {
  const { db, tokens, now } = deps;
  const model = oauthModel(db, tokens, now);
  const server = new OAuth2Server({
    model: model as never,
    extendedGrantTypes: { [TOKEN_EXCHANGE_GRANT]: tokenExchangeGrantType(db, tokens) },
  });
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: deps.bodyLimitBytes });
  /** Failed sign-ins in 15 minutes, counted per `key` of the request (`undefined`: not counted here). */
  const signInThrottle = (scope: string, limit: number, keyOf?: (req: express.Request) => string | undefined) =>
    failureThrottle(deps.limitStores, {
      scope,
      limit,
      windowMs: 15 * 60_000,
      // Fails closed: a throttle against password guessing that lets everything through while Redis is down is no
      // throttle.
      onStoreFailure: 'refuse',
      ...(keyOf ? { keyOf } : {}),
      // A redirect (302) is a success; a re-rendered page (401) counts.
      refuse: (_req, res) =>
        res
          .status(429)
          .type('html')
          .send(renderErrorPage('Too many sign-in attempts; wait a few minutes and try again.')),
    });
  const signInLimit = [
    signInThrottle('oauth-sign-in', SIGN_IN_ATTEMPTS_PER_ADDRESS),
    // Per account too, so a guesser spread over many addresses is slowed as much. The e-mail is hashed: the store
    // (Redis) holds no address of anyone.
    signInThrottle('oauth-sign-in-account', SIGN_IN_ATTEMPTS_PER_ACCOUNT, (req) => {
      const email = (req.body as Record<string, unknown> | undefined)?.email;
      return typeof email === 'string' && email ? hashSecret(email.trim().toLowerCase()) : undefined;
    }),
  ];

  // Failed client authentications at the token endpoint, per address and per client_id (client-auth-limit.ts).
  const tokenClientAuthLimit = clientAuthLimit(deps.limitStores);

  router.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json(metadata(tokens.issuer, Object.keys(deps.scopes)));
  });
  router.get('/oauth/jwks.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(tokens.jwks());
  });

  // The sign-in page and its redirects (which carry an authorization code) are never stored by any cache.
  router.use('/oauth/authorize', (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  router.get('/oauth/authorize', refuseUnstorableText(asErrorPage), async (req, res) => {
    const params = stringParams(req.query, AUTHORIZE_PARAMS);
    const checked = await checkAuthorizationRequest(params);
    if ('page' in checked) return void res.status(400).type('html').send(checked.page);
    if ('redirect' in checked) return void res.redirect(303, checked.redirect);
    sendLoginPage(res, 200, checked.client, params);
  });

  router.post('/oauth/authorize', form, refuseUnstorableText(asErrorPage), ...signInLimit, async (req, res) => {
    const params = stringParams(req.body, AUTHORIZE_PARAMS);
    const { email = '', password = '', decision } = stringParams(req.body, SIGN_IN_FIELDS);
    const checked = await checkAuthorizationRequest(params);
    if ('page' in checked) return void res.status(400).type('html').send(checked.page);
    if ('redirect' in checked) return void res.redirect(303, checked.redirect);
    if (decision === 'deny')
      return void res.redirect(303, errorRedirect(params, 'access_denied', 'The student denied the request.'));

    const account = await findCredentials(db, email);
    const valid = account?.password_hash
      ? await verifyPassword(account.password_hash, password)
      : await verifyNothing(password);
    if (!account || !valid)
      return void sendLoginPage(res, 401, checked.client, params, { email, error: 'The e-mail or password is wrong.' });

    // The moment the password was checked: what the 5-minute re-authentication window counts from.
    const authenticatedAt = now();
    const response = new OAuthResponse(res);
    try {
      await server.authorize(new OAuthRequest(req), response, {
        authenticateHandler: { handle: (): GrantUser => ({ id: account.id, authenticated_at: authenticatedAt }) },
        authorizationCodeLifetime: AUTHORIZATION_CODE_TTL_SECONDS,
      });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      // The library wraps a failure of ours (the database, say) in a ServerError and redirects with server_error; a
      // dependency's failure is temporarily_unavailable instead (RFC 6749 §4.1.2.1), and either way the log learns of
      // it.
      if (dependencyFailure(innerError(error))) {
        logDependencyFailure(req, innerError(error));
        return void res.redirect(303, errorRedirect(params, 'temporarily_unavailable', UNAVAILABLE_DESCRIPTION));
      }
      // The library wraps a failure of ours (the database, say) in a ServerError and redirects with server_error and
      // the failure's own message; the app learns only that it failed, the log learns why.
      if (error.code >= 500) {
        req.log.error({ err: error }, 'authorize endpoint failed');
        return void res.redirect(303, errorRedirect(params, 'server_error', SERVER_ERROR_DESCRIPTION));
      }
    }
    const location = response.get('location');
    if (location) res.redirect(303, location);
    else res.status(400).type('html').send(renderErrorPage('The authorization request was refused.'));
  });

  router.post('/oauth/token', form, refuseUnstorableText(asOAuthError), ...tokenClientAuthLimit, async (req, res) => {
    const response = new OAuthResponse(res);
    try {
      await server.token(new OAuthRequest(req), response, {
        accessTokenLifetime: ACCESS_TOKEN_TTL_SECONDS,
        refreshTokenLifetime: REFRESH_TOKEN_TTL_SECONDS,
        alwaysIssueNewRefreshToken: true,
        // Public clients (no secret) authenticate by PKCE and their client_id; confidential ones always by secret.
        requireClientAuthentication: { authorization_code: false, refresh_token: false },
        // Token exchange answers `issued_token_type` (RFC 8693 §2.2.1), an attribute beyond RFC 6749's. Other grants
        // keep them off: the library would otherwise copy all their token objects carry into the answer (the
        // authorization code grant's carries the code).
        allowExtendedTokenAttributes: req.body?.grant_type === TOKEN_EXCHANGE_GRANT,
      });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (dependencyFailure(innerError(error))) throw innerError(error);
      if (error.code >= 500) req.log.error({ err: error }, 'token endpoint failed');
      if (error.name === 'invalid_client') countClientAuthFailure(res);
      // Rendered here, not from the library's response: it fills that only for errors raised after its own request
      // checks (a JSON, text or empty body left it a 200 `{}`), and with a server error's internal message.
      response.status = error.code;
      response.body = tokenError(error);
    }
    res
      .status(response.status ?? 200)
      .set(response.headers)
      .set('Cache-Control', 'no-store')
      .json(response.body);
  });

  router.post('/oauth/revoke', form, refuseUnstorableText(asOAuthError), async (req, res) => {
    const outcome = await revokeToken(db, tokens, model, req, now());
    res.set('Cache-Control', 'no-store');
    if (outcome === 'revoked') return void res.status(200).end();
    if (outcome === 'invalid_client') {
      return void res
        .status(401)
        .set('WWW-Authenticate', 'Basic realm="oauth"')
        .json({ error: 'invalid_client', error_description: 'Client authentication failed.' });
    }
    res.status(400).json({ error: 'invalid_request', error_description: 'The token parameter is missing.' });
  });

  // A dependency that fails (the database, the sign-in throttle's counters) answers 503 in each endpoint's own format:
  // a page on the authorize endpoint, RFC 6749's error object elsewhere. Anything else is a bug, for the app's 500.
  router.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    const unavailable = dependencyFailure(error);
    if (!unavailable) return next(error);
    logDependencyFailure(req, error);
    res.status(503).set(unavailable.extra.headers);
    if (req.path === '/oauth/authorize')
      return void res.type('html').send(renderErrorPage(UNAVAILABLE_DESCRIPTION, 'Sign-in is unavailable right now'));
    res
      .set('Cache-Control', 'no-store')
      .json({ error: 'temporarily_unavailable', error_description: UNAVAILABLE_DESCRIPTION });
  });

  /** Checks what must be right before the page is shown: a bad client or redirect URI never redirects (RFC 6749 §4.1.2.1). */
  async function checkAuthorizationRequest(params: Record<string, string>): Promise<CheckedRequest> {
    const client = params.client_id ? await model.getClient(params.client_id, null) : false;
    if (!client) return { page: renderErrorPage('The application that sent you here is not registered.') };
    const redirectUri = params.redirect_uri;
    if (!redirectUri || !(await model.validateRedirectUri(redirectUri, client))) {
      return { page: renderErrorPage('The application sent you with a return address it has not registered.') };
    }
    if (params.response_type !== 'code')
      return { redirect: errorRedirect(params, 'unsupported_response_type', 'Only response_type=code is supported.') };
    if (!params.code_challenge || params.code_challenge_method !== 'S256') {
      return {
        redirect: errorRedirect(
          params,
          'invalid_request',
          'PKCE is required: send code_challenge with code_challenge_method=S256.',
        ),
      };
    }
    const scopes = await model.validateScope(
      { id: '' },
      client,
      params.scope ? params.scope.split(' ').filter(Boolean) : undefined,
    );
    if (!scopes)
      return {
        redirect: errorRedirect(params, 'invalid_scope', 'The scope asks for more than this application may have.'),
      };
    return { client: { name: client.name as string, scopes, redirectUri } };
  }

  function sendLoginPage(
    res: Response,
    status: number,
    client: { name: string; scopes: string[]; redirectUri: string },
    params: Record<string, string>,
    extra: { email?: string; error?: string } = {},
  ) {
    // The form's post redirects to the app; browsers apply form-action to that redirect too.
    res.setHeader(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(client.redirectUri).origin}; frame-ancestors 'none'; base-uri 'none'`,
    );
    const scopes = client.scopes.map((scope): [string, string] => [scope, deps.scopes[scope] ?? '']);
    res
      .status(status)
      .type('html')
      .send(renderLoginPage({ clientName: client.name, scopes, params, ...extra }));
  }

  return router;
}

type CheckedRequest =
  | { page: string }
  | { redirect: string }
  | { client: { name: string; scopes: string[]; redirectUri: string } };

/**
 * Refuses a query, form or Basic credentials carrying text PostgreSQL cannot store (server/http/input-guard.ts, the
 * check the API surfaces make too), in the endpoint's own format.
 */
function refuseUnstorableText(refuse: (res: Response, field: FieldError) => void): RequestHandler {
  return (req, res, next) => {
    const unstorable =
      unstorableText(req.query, '') ??
      unstorableText(req.body, '') ??
      unstorableText({ authorization: basicCredentials(req) }, '');
    if (unstorable) refuse(res, unstorable);
    else next();
  };
}

/** The sign-in page's endpoint answers a person: with the error page (RFC 6749 §4.1.2.1: never a redirect here). */
function asErrorPage(res: Response, { path, message }: FieldError): void {
  res
    .status(400)
    .type('html')
    .send(renderErrorPage(`The request's ${path} ${message}.`));
}

/** RFC 6749 §5.2 error response, as the token and revocation endpoints answer. */
function asOAuthError(res: Response, { path, message }: FieldError): void {
  res
    .status(400)
    .set('Cache-Control', 'no-store')
    .json({ error: 'invalid_request', error_description: `${path} ${message}.` });
}

/** The client id and secret of HTTP Basic credentials, as the endpoints read them (each part form-urldecoded). */
function basicCredentials(req: Request): string[] | undefined {
  const basic = /^Basic +(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  if (!basic) return undefined;
  return Buffer.from(basic, 'base64')
    .toString('utf8')
    .split(':')
    .map((part) => {
      try {
        return decodeURIComponent(part.replace(/\+/g, ' '));
      } catch {
        return part;
      }
    });
}

/** The authorization request's parameters: the only ones the sign-in form carries through as hidden fields. */
const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
];
/** What the student types or clicks on the sign-in form: read from the posted form only, never carried as hidden fields. */
const SIGN_IN_FIELDS = ['email', 'password', 'decision'];

/** The single-valued string parameters among `names` of a query or form; repeated or nested values are dropped. */
function stringParams(source: unknown, names: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries((source ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && names.includes(name)) params[name] = value;
  }
  return params;
}

/** The failure the library wrapped in a ServerError (its `inner`, which its types do not declare). */
function innerError(error: OAuthError): unknown {
  return (error as OAuthError & { inner?: unknown }).inner;
}

function errorRedirect(params: Record<string, string>, error: string, description: string): string {
  const url = new URL(params.redirect_uri!);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (params.state) url.searchParams.set('state', params.state);
  return url.toString();
}

function metadata(issuer: string, scopes: string[]) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/oauth/jwks.json`,
    scopes_supported: scopes,
    response_types_supported: ['code'],
    // Token exchange is for institutions only (`institutions create`); other clients get unauthorized_client.
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', TOKEN_EXCHANGE_GRANT],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    service_documentation: `${issuer}/docs`,
  };
}
