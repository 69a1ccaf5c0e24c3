// The API surfaces' requests, served on Node's own request and response with no Express in the way: the same
// middleware as every other path (metrics, the request line, security headers, the body limit and JSON parser), then
// the surface whose prefix the path is under. Express's own per-request work (its prototype swap of req and res, its
// router's walk over the middleware stack, res.send's header handling) cost about as much CPU as a whole hot read
// of the partner surface, several times what node:http itself costs (the figures are in docs/performance.md and the
// bench). Express keeps the other paths: OAuth, the docs, the probes, the redirect to the docs and the
// 404 for paths that are no API's.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Serves a request of one surface (server/contract/surface.ts makes one from a contract). Rejects with the error to
 * render as a problem: a Problem, a dependency failure, or a bug.
 */
export type SurfaceHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** An Express-style middleware that calls `next` synchronously (no error) or answers itself. */
type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

export interface ApiRequestsOptions {
  /** Run in this order on every request; each must call `next` before returning, or answer. */
  prepare: Middleware[];
  /** Reads the request body; called only for methods whose body means something (POST, PUT, PATCH). */
  parseBody: Middleware;
  /** The surfaces by path prefix, the longest (most specific) first. */
  surfaces: Array<{ prefix: string; serve: SurfaceHandler }>;
  /** Renders what a step threw or rejected with (a Problem, a dependency failure, a bug) as a problem response. */
  renderError: (error: unknown, req: IncomingMessage, res: ServerResponse) => void;
}

/** Methods whose request body means something (RFC 9110); other methods' bodies are never read. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

export function apiRequests(
  options: ApiRequestsOptions,
): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  const { prepare, parseBody, surfaces, renderError } = options;
  return (req, res, path) => {
    const fail = (error: unknown) => renderError(error, req, res);
    let answered = true;
    const next = () => void (answered = false);
    try {
      for (const step of prepare) {
        answered = true;
        step(req, res, next);
        if (answered) return; // the step answered (a body over the limit)
      }
    } catch (error) {
      return fail(error); // as Express would: a step that throws must not take the process down
    }
    const surface = surfaces.find(({ prefix }) => path === prefix || path.startsWith(prefix + '/'));
    if (!surface) return fail(new Error(`no surface serves ${path}`));
    if (!BODY_METHODS.has(req.method ?? '')) return void surface.serve(req, res).catch(fail);
    parseBody(req, res, (error) => (error ? fail(error) : void surface.serve(req, res).catch(fail)));
  };
}
