// serveSurface's run-time response check (VALIDATE_RESPONSES=1): a handler answering off the contract is reported.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import supertest from 'supertest';
import { partnerV1Handlers } from '../../handlers/partner-v1/index.ts';
import { loadSurfaceContract } from '../../server/contract/contract.ts';
import { createLifecycle } from '../../server/process/lifecycle.ts';
import { serveSurface } from '../../server/contract/surface.ts';
import { testDatabase } from '../support/shared-database.ts';

type Limit = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

// Headers the contract requires on 200s, set in the real app by the limiter and the request logger.
const oneWindow: Limit = async (_req, res) => {
  for (const [name, value] of Object.entries({
    RateLimit: '"minute"; r=0; t=1',
    'RateLimit-Policy': '"minute"; q=1; w=60',
    'X-Request-Id': 'r',
  })) {
    res.setHeader(name, value);
  }
};

// As the limiter writes two windows: one field line per window, which Node keeps as an array.
const twoWindows: Limit = async (_req, res) => {
  for (const name of ['minute', 'day']) {
    res.appendHeader('RateLimit', `"${name}"; r=0; t=1`);
    res.appendHeader('RateLimit-Policy', `"${name}"; q=1; w=60`);
  }
  res.setHeader('X-Request-Id', 'r');
};

async function appWithHealth(body: unknown, violations: string[][], limit: Limit = oneWindow) {
  const principal = { id: 'k', prefix: 'svc_live_Ab3dE6gH', name: 'n', per_minute: 1, per_day: 1 };
  const serve = serveSurface({
    contract: await loadSurfaceContract('partner-v1'),
    authenticators: {
      ApiKeyHeader: async () => ({ principal }),
      ApiKeyBearer: async () => ({ error: 'missing' as const }),
    },
    challenge: 'Bearer',
    unauthorizedDetail: () => 'no',
    limit,
    handlers: { ...partnerV1Handlers, getHealth: async () => ({ status: 200, body }) },
    context: { db: testDatabase().db, now: () => new Date(), lifecycle: createLifecycle(), apiVersion: '1.0.0' },
    onContractViolation: (_req, failures) => violations.push(failures),
  });
  return supertest(
    (req: IncomingMessage, res: ServerResponse) =>
      void serve(req, res).catch((error: unknown) => res.writeHead(500).end(String(error))),
  );
}

describe('serveSurface response check', () => {
  it('reports a handler response that breaks the contract', async () => {
    const violations: string[][] = [];
    const api = await appWithHealth({ status: 'ok', version: 'one' }, violations);
    await api.get('/api/v1/health').expect(200);
    assert.equal(violations.length, 1);
    assert.ok(
      violations[0]!.some((f) => /your_key/.test(f)),
      violations[0]!.join('\n'),
    );
    assert.ok(
      violations[0]!.some((f) => /version/.test(f)),
      violations[0]!.join('\n'),
    );
  });

  const keptBody = {
    status: 'ok',
    version: '1.0.0',
    your_key: 'svc_live_Ab3dE6gH',
    rate_limit_per_min: 1,
    rate_limit_per_day: 1,
  };

  it('stays quiet for a response that keeps it', async () => {
    const violations: string[][] = [];
    await (await appWithHealth(keptBody, violations)).get('/api/v1/health').expect(200);
    assert.deepEqual(violations, []);
  });

  it('reads a header sent as several field lines as a client does: one value, joined with ", "', async () => {
    const violations: string[][] = [];
    const response = await (await appWithHealth(keptBody, violations, twoWindows)).get('/api/v1/health').expect(200);
    assert.equal(response.headers['ratelimit'], '"minute"; r=0; t=1, "day"; r=0; t=1');
    assert.deepEqual(violations, []);
  });

  it('checks the response as sent: the ETag the body gets is seen, and a 304 to a matching If-None-Match is documented', async () => {
    const violations: string[][] = [];
    const api = await appWithHealth(keptBody, violations);
    const first = await api.get('/api/v1/universities').expect(200);
    assert.ok(first.headers['etag'], 'the list carries its ETag');
    await api.get('/api/v1/universities').set('If-None-Match', first.headers['etag']).expect(304);
    assert.deepEqual(violations, []);
  });
});
