// The mock server's app: every generated surface, answered from the spec's examples, so client teams can build
// against a change before the backend ships it. Requests are routed, authenticated (a credential of a scheme the
// operation accepts must be present; its value is not checked) and validated by the spec like the real service;
// then the operation answers with its first 2xx response's first named example. A `Prefer` header picks another:
// `Prefer: code=404` (a documented status), `Prefer: example=<name>` (a named example of that response).
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Context, OpenAPIBackend, Operation } from 'openapi-backend';
import type { Logger } from 'pino';
import { bundledSpecs, type BundledSpec } from '../../server/contract/bundled-specs.ts';
import { loadContract, routedMethod, type Contract } from '../../server/contract/contract.ts';
import { requestLogging } from '../../server/process/logger.ts';
import { Problem, problems, sendProblem } from '../../server/http/problems.ts';

type SecurityScheme = { type: string; in?: string; name?: string; scheme?: string };
type HeaderObject = {
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
  schema?: { default?: unknown; example?: unknown };
};
type ResponseObject = { headers?: Record<string, HeaderObject>; content?: Record<string, unknown> };

export interface MockSurface {
  surface: BundledSpec['surface'];
  contract: Contract;
}

export async function createMockApp(
  logger: Logger,
  specs: BundledSpec[] = bundledSpecs(),
): Promise<{ app: express.Express; surfaces: MockSurface[] }> {
  const surfaces = await Promise.all(
    specs.map(async (spec) => ({ surface: spec.surface, contract: mockContract(await loadContract(spec.definition)) })),
  );
  const app = express();
  app.disable('x-powered-by');
  app.use(requestLogging(logger));
  app.use(cors);
  app.use(express.json());
  app.use(async (req: Request, res: Response, next: NextFunction) => {
    const owner = surfaces.find(({ contract }) => contract.allowedMethods(req.path).length > 0);
    if (!owner)
      return next(
        problems.notFound(`No operation of ${surfaces.map((s) => s.surface).join(' or ')} exists at ${req.path}.`),
      );
    try {
      await owner.contract.api.handleRequest(
        {
          method: routedMethod(req.method),
          path: req.path,
          query: req.query as Record<string, string>,
          headers: req.headers as Record<string, string>,
          body: req.body,
        },
        req,
        res,
      );
    } catch (error) {
      next(error);
    }
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof Problem) return sendProblem(req, res, error);
    if ((error as { type?: unknown }).type === 'entity.parse.failed')
      return sendProblem(req, res, problems.malformedBody('The request body is not valid JSON.'));
    req.log.error({ err: error }, 'mock failed');
    sendProblem(req, res, problems.internal());
  });
  return { app, surfaces };
}

/** Registers the mock's handlers on a surface's contract: presence-only security, spec validation, examples. */
function mockContract(contract: Contract): Contract {
  const { api } = contract;
  const schemes = (api.definition.components?.securitySchemes ?? {}) as Record<string, SecurityScheme>;
  for (const [name, scheme] of Object.entries(schemes))
    api.registerSecurityHandler(name, (_c: Context, req: Request) => credentialPresent(scheme, req));
  api.register({
    notFound: (_c: Context, req: Request) => {
      throw problems.notFound(`No operation exists at ${req.path}.`);
    },
    methodNotAllowed: (_c: Context, req: Request) => {
      throw problems.methodNotAllowed(req.method, req.path, contract.allowedMethods(req.path));
    },
    unauthorizedHandler: (c: Context, _req: Request, res: Response) => answer(api, res, c.operation, { code: '401' }),
    validationFail: (c: Context) => {
      throw problems.invalidRequest(
        (c.validation.errors ?? []).map((e) => ({
          path: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'request',
          message: e.message ?? 'is invalid',
        })),
      );
    },
    notImplemented: (c: Context, req: Request, res: Response) => answer(api, res, c.operation, preference(req)),
  });
  return contract;
}

/** `Prefer: code=404, example=not_found` → { code: '404', example: 'not_found' } (Prism's convention). */
function preference(req: Request): { code?: string; example?: string } {
  const preferred: { code?: string; example?: string } = {};
  for (const part of (req.get('prefer') ?? '').split(/[,;]/)) {
    const [key, value] = part.split('=').map((s) => s.trim().replace(/^"|"$/g, ''));
    if ((key === 'code' || key === 'example') && value) preferred[key] = value;
  }
  return preferred;
}

/** Sends the documented response of `operation`: the chosen status, its example body and its headers' examples. */
function answer(
  api: OpenAPIBackend,
  res: Response,
  operation: Operation,
  { code, example }: { code?: string; example?: string },
): void {
  const responses = (operation.responses ?? {}) as Record<string, ResponseObject>;
  if (code && !responses[code]) {
    throw problems.invalidRequest([
      {
        path: 'header.prefer',
        message: `code=${code} is not documented for ${operation.operationId} (documented: ${Object.keys(responses).join(', ')})`,
      },
    ]);
  }
  // openapi-backend picks the named example asked for, else the first one; it falls back to generating from the
  // schema only where a response has no example (and gets `const` and type arrays wrong: the spec's lint
  // requires examples, and the mock test catches any gap).
  const { status, mock } = api.mockResponseForOperation(operation.operationId!, {
    ...(code ? { code: Number(code) } : {}),
    ...(example ? { example } : {}),
  });
  const response = responses[String(status)] ?? {};
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value =
      header.example ??
      Object.values(header.examples ?? {})[0]?.value ??
      header.schema?.example ??
      header.schema?.default;
    if (value !== undefined && !res.hasHeader(name)) res.setHeader(name, String(value));
  }
  const mediaType = Object.keys(response.content ?? {})[0];
  res.status(status);
  if (!mediaType) return void res.end();
  res.type(mediaType).send(typeof mock === 'string' ? mock : JSON.stringify(mock));
}

function credentialPresent(scheme: SecurityScheme, req: Request): boolean {
  const authorization = req.get('authorization') ?? '';
  if (scheme.type === 'apiKey' && scheme.name) {
    if (scheme.in === 'query') return typeof req.query[scheme.name] === 'string';
    return Boolean(req.get(scheme.name));
  }
  if (scheme.type === 'http') return new RegExp(`^${scheme.scheme ?? 'bearer'}\\s+\\S`, 'i').test(authorization);
  return /^bearer\s+\S/i.test(authorization); // oauth2, openIdConnect
}

/** Lets the try-it console of the docs, served from another origin, call the mock (with a preflight for its headers). */
function cors(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader(
    'Access-Control-Expose-Headers',
    'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, Allow, Location',
  );
  if (req.method === 'OPTIONS' && req.get('access-control-request-method')) {
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
    res.setHeader('Access-Control-Allow-Headers', req.get('access-control-request-headers') ?? '');
    res.setHeader('Access-Control-Max-Age', '600');
    return void res.status(204).end();
  }
  next();
}
