// Routing a request to its operation, as openapi-backend's router does, with the path templates compiled once.
import type { OpenAPIBackend, Operation } from 'openapi-backend';

/** openapi-backend's pattern for a path template: each `{name}` matches one path segment, the rest literally. */
function templatePattern(path: string): RegExp {
  const literal = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${path
      .replace(/\{[^}]+\}/g, '\0')
      .split('\0')
      .map(literal)
      .join('[^/]+')}$`,
  );
}

/**
 * openapi-backend matches a path with a parameter (a card's reviews, a task) by turning every operation's path
 * template into a RegExp on every request and sorting the matches; the definition never changes, so the patterns are
 * compiled and ordered once. Same answers: an exact path with its method first, then the templates that match, the
 * one with the most literal characters first (ties in the spec's order), the first with the method; the same 404 and
 * 405 errors when `strict`.
 */
export function matchTemplatesOnce(api: OpenAPIBackend): void {
  const router = api.router;
  const operations = router.getOperations();
  const templates = operations
    .map((operation) => ({
      operation,
      pattern: templatePattern(operation.path),
      literal: operation.path.replace(/\{.*?\}/g, '').length,
    }))
    .sort((a, b) => b.literal - a.literal);
  const underRoot = (path: string) =>
    (router as unknown as { isUnderApiRoot(path: string): boolean }).isUnderApiRoot(path);
  const refuse = (strict: boolean | undefined, error: string) => {
    if (strict) throw new Error(error);
    return undefined as unknown as Operation;
  };
  router.matchOperation = ((req: Parameters<typeof router.matchOperation>[0], strict?: boolean) => {
    const normalized = router.normalizeRequest(req);
    if (!underRoot(normalized.path)) return refuse(strict, '404-notFound: no route matches request');
    const path = router.normalizePath(normalized.path);
    const exact = operations.find((operation) => operation.path === path && operation.method === normalized.method);
    if (exact) return exact;
    let pathMatched = false;
    for (const { operation, pattern } of templates) {
      if (!pattern.test(path)) continue;
      if (operation.method === normalized.method) return operation;
      pathMatched = true;
    }
    return pathMatched
      ? refuse(strict, '405-methodNotAllowed: this method is not registered for the route')
      : refuse(strict, '404-notFound: no route matches request');
  }) as typeof router.matchOperation;
}
