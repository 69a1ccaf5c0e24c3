// The security schemes that take `Authorization: Bearer <credential>` (RFC 6750 §2.1) on either surface, each a
// passport-http-bearer strategy: the library reads the credential from the header, the scheme's `check` says what it
// is worth. Passport is given the request's headers only, never the request: the other carriers RFC 6750 allows (a
// form body's or the query's `access_token`) are none the specs declare, and the properties passport sets on what it
// is given (req.login, req.logout, ...) stay off Node's request.
import type { IncomingMessage } from 'node:http';
import { Passport } from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import type { AuthOutcome } from '../contract/surface.ts';

const MISSING = { error: 'missing' } as const;

/**
 * Authenticates a request by its bearer credential: what `check` makes of the token; 'missing' when the request has
 * none (no Authorization header, another scheme, or a header that is not `Bearer <token>`).
 */
export function bearerAuthenticator<P>(
  check: (token: string) => Promise<AuthOutcome<P>>,
): (req: IncomingMessage) => Promise<AuthOutcome<P>> {
  const passport = new Passport();
  // The strategy's "user" is the whole outcome, a rejection with its detail included: passport's `false` then means
  // one thing only, that no token was sent.
  passport.use(
    new BearerStrategy((token, done) => {
      check(token).then(
        (outcome) => done(null, outcome),
        (error: unknown) => done(error),
      );
    }),
  );
  return (req) =>
    new Promise((resolve, reject) => {
      const authenticate = passport.authenticate(
        'bearer',
        { session: false },
        (error: unknown, outcome: AuthOutcome<P> | false) => (error ? reject(error) : resolve(outcome || MISSING)),
      );
      authenticate(
        { headers: { ...req.headers, authorization: singleSpaced(req.headers.authorization) } },
        undefined,
        reject,
      );
    });
}

/**
 * RFC 6750 §2.1 lets one or more spaces follow the scheme (`"Bearer" 1*SP b64token`); passport-http-bearer splits the
 * header on single spaces, so runs are made one space first and `Bearer  <token>` keeps working as it always has.
 */
function singleSpaced(authorization: string | undefined): string | undefined {
  return authorization?.replace(/^(\S+) +/, '$1 ');
}
