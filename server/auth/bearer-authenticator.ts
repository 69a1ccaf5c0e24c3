// The security schemes that take `Authorization: Bearer <credential>` (RFC 6750 §2.1) on either surface: passport-http-bearer
// reads the credential from the header, each scheme's `check` says what it is worth. Passport is given the request's
// headers only, never the request: the other carriers RFC 6750 allows (a form body's or the query's `access_token`)
// are none the specs declare, and the properties passport sets on what it is given (req.login, req.logout, ...) stay
// off Node's request. The general surface has two bearer schemes (access tokens and personal keys), which openapi's
// security requirements both run on every request: the header is read once per request and both are given the token.
import type { IncomingMessage } from 'node:http';
import { Passport } from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import type { AuthOutcome } from '../contract/surface.ts';

const MISSING = { error: 'missing' } as const;

/** passport's reading of the header: the strategy's "user" is the token itself, so passport only parses. */
const reader = new Passport();
reader.use(new BearerStrategy((token, done) => done(null, { token })));

const TOKEN = Symbol('bearer token');
type Read = IncomingMessage & { [TOKEN]?: Promise<string | undefined> };

/** The request's bearer token, as passport-http-bearer reads it (undefined: none, another scheme, or malformed). */
function bearerToken(req: IncomingMessage): Promise<string | undefined> {
  return ((req as Read)[TOKEN] ??= new Promise((resolve, reject) => {
    const authenticate = reader.authenticate(
      'bearer',
      { session: false },
      (error: unknown, read: { token: string } | false) =>
        error ? reject(error) : resolve(read ? read.token : undefined),
    );
    // The one header the strategy reads (it also looks for a body's or a query's access_token: none here).
    authenticate({ headers: { authorization: singleSpaced(req.headers.authorization) } }, undefined, reject);
  }));
}

/**
 * Authenticates a request by its bearer credential: what `check` makes of the token; 'missing' when the request has
 * none (no Authorization header, another scheme, or a header that is not `Bearer <token>`).
 */
export function bearerAuthenticator<P>(
  check: (token: string) => Promise<AuthOutcome<P>>,
): (req: IncomingMessage) => Promise<AuthOutcome<P>> {
  return async (req) => {
    const token = await bearerToken(req);
    return token === undefined ? MISSING : check(token);
  };
}

/**
 * RFC 6750 §2.1 lets one or more spaces follow the scheme (`"Bearer" 1*SP b64token`); passport-http-bearer splits the
 * header on single spaces, so runs are made one space first and `Bearer  <token>` keeps working as it always has.
 * A header without two spaces in a row is what it is already (the common case costs no regular expression).
 */
function singleSpaced(authorization: string | undefined): string | undefined {
  return authorization?.includes('  ') ? authorization.replace(/^(\S+) +/, '$1 ') : authorization;
}
