// The rendered docs: `npm run docs` builds a static page per surface that shows every operation of that surface's
// spec and nothing of the others, and the running service serves the same pages at /docs and /api/v1/docs under a
// content-security policy relaxed for them only. The pages are checked in a real browser (browser.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import supertest from 'supertest';
import type { Surface } from '../../server/contract/surfaces.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { DOCS_PATHS } from '../../server/contract/docs.ts';
import { listen, type Listening } from '../support/listening.ts';
import { buildApp } from '../support/partner-app.ts';
import { foreignOperations, launchOrSkip, missingOperations, operationsOf, serveDirectory, watchPage } from './browser.ts';

const root = new URL('../../', import.meta.url).pathname;
const specs = bundledSpecs();
const operationsBySurface = new Map(specs.map((spec) => [spec.surface, operationsOf(spec.definition)]));
const othersThan = (surface: Surface) => specs.filter((s) => s.surface !== surface).flatMap((s) => operationsOf(s.definition));

describe('rendered docs served by the service', () => {
  let api: ReturnType<typeof supertest>;
  before(async () => (api = supertest(await buildApp())));

  it('/ redirects to the general reference, where a person opening the address in a browser wants to land', async () => {
    await api.get('/').expect(302).expect('Location', DOCS_PATHS.general);
  });

  for (const spec of specs) {
    const path = DOCS_PATHS[spec.surface];

    it(`${path} is public HTML that loads the ${spec.surface} spec and Scalar from beside it`, async () => {
      const res = await api.get(path).expect(200).expect('Content-Type', /^text\/html/);
      assert.match(res.text, new RegExp(`"url":"${path}/openapi.json"`));
      assert.match(res.text, new RegExp(`<script src='${path}/standalone.js'>`));
      assert.doesNotMatch(res.text, /<script>/, 'no inline script, so script-src stays self');
      const spec_ = await api.get(`${path}/openapi.json`).expect(200).expect('Content-Type', /json/);
      assert.deepEqual(spec_.body, spec.definition, `${path}/openapi.json is the bundled ${spec.surface} spec`);
      await api.get(`${path}/standalone.js`).expect(200).expect('Content-Type', /javascript/).expect('Cache-Control', 'public, max-age=86400');
      await api.get(`${path.toUpperCase()}/`).expect(200).expect('Content-Type', /^text\/html/); // routed as Express routes: any case, a trailing slash
    });

    it(`${path} relaxes the content-security policy for Scalar and the try-it servers only`, async () => {
      const csp = directives((await api.get(path).expect(200)).headers['content-security-policy']);
      assert.deepEqual(csp['script-src'], ["'self'"]);
      assert.deepEqual(csp['style-src'], ["'self'", "'unsafe-inline'"]);
      assert.deepEqual(csp['connect-src'], ["'self'", ...new Set([...(spec.definition.servers ?? []).map((s) => new URL(s.url).origin), 'http://localhost:4010'])]);
      assert.equal(csp['upgrade-insecure-requests'], undefined);
      const elsewhere = directives((await api.get('/no-such-page').expect(404)).headers['content-security-policy']);
      assert.equal(elsewhere['connect-src'], undefined, 'other routes keep helmet defaults');
      assert.deepEqual(elsewhere['upgrade-insecure-requests'], []);
    });
  }

  it('leaves everything else under /api/v1 to the partner surface', async () => {
    const res = await api.get('/api/v1/docs/nothing-here').expect(404).expect('Content-Type', /problem\+json/);
    assert.equal(res.body.code, 'not_found');
  });
});

describe('npm run docs', function () {
  this.timeout(180_000);
  let outDir: string;
  before(() => {
    outDir = mkdtempSync(join(tmpdir(), 'sc-docs-'));
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/docs.ts', '--out', outDir], { cwd: root, stdio: 'pipe' });
  });
  after(() => rmSync(outDir, { recursive: true, force: true }));

  it('writes index.html, openapi.json and standalone.js for every generated surface', () => {
    for (const spec of specs) assert.deepEqual(readdirSync(join(outDir, spec.surface)).sort(), ['index.html', 'openapi.json', 'standalone.js']);
  });

  describe('the docs in a browser', () => {
    let browser: Browser;
    let staticHost: { url: string; server: Server };
    let service: Listening;

    before(async function () {
      browser = await launchOrSkip(this);
      staticHost = await serveDirectory(outDir);
      service = await listen(await buildApp());
    });
    after(async () => {
      await browser?.close();
      staticHost?.server.close();
      await service?.close();
    });

    for (const spec of specs) {
      const own = operationsBySurface.get(spec.surface)!;

      it(`the built ${spec.surface} docs, on a static host, show all ${own.length} operations and none of another surface`, async () => {
        await expectDocs(`${staticHost.url}/${spec.surface}/index.html`, spec.surface);
      });

      it(`the service's ${DOCS_PATHS[spec.surface]} shows all ${own.length} operations under its content-security policy`, async () => {
        await expectDocs(`${service.baseUrl}${DOCS_PATHS[spec.surface]}`, spec.surface);
      });
    }

    async function expectDocs(url: string, surface: Surface) {
      const page = await browser.newPage();
      try {
        const problems = await watchPage(page);
        await page.goto(url);
        const own = operationsBySurface.get(surface)!;
        assert.deepEqual(await missingOperations(page, own), [], `operations missing from ${url}`);
        assert.deepEqual(await foreignOperations(page, othersThan(surface), own), [], `operations of another surface on ${url}`);
        assert.deepEqual(problems, [], `${url} loads cleanly`);
      } finally {
        await page.close();
      }
    }
  });
});

/** A CSP header as directive → values. */
function directives(header: string | undefined): Record<string, string[]> {
  return Object.fromEntries(
    (header ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name!, values]),
  );
}
