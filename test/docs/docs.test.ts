// The rendered docs: `npm run docs` builds a static page per surface that shows every operation of that surface's
// spec and nothing of the others, and the running service serves the same pages at /docs and /api/v1/docs under a
// content-security policy relaxed for them only. The guides (docs/*.md) are built beside them and served at
// /docs/guides/. The pages are checked in a real browser (browser.ts): every guide as served and as built, with every
// link on it; each reference as the service serves it, every operation looked for, and as built, where its page loads
// the same spec and renderer by relative links.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import supertest from 'supertest';
import type { Surface } from '../../server/contract/surfaces.ts';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { DOCS_PATHS, referenceTitle } from '../../server/contract/docs.ts';
import { readGuides } from '../../server/contract/guide-files.ts';
import { INDEX_SLUG, type Guide } from '../../server/contract/guide-site.ts';
import { GUIDES_PATH } from '../../server/contract/guides-routes.ts';
import { SCALAR_SCRIPT } from '../../server/contract/scalar-bundle.ts';
import { listen, type Listening } from '../support/listening.ts';
import { buildApp } from '../support/partner-app.ts';
import {
  brokenLinks,
  foreignOperations,
  launchOrSkip,
  missingOperations,
  openWatchedPage,
  operationsOf,
  type DocumentedOperation,
  serveDirectory,
  type WatchedPage,
} from './browser.ts';

const root = new URL('../../', import.meta.url).pathname;
const specs = bundledSpecs();
const operationsBySurface = new Map(specs.map((spec) => [spec.surface, operationsOf(spec.definition)]));
const othersThan = (surface: Surface) =>
  specs.filter((s) => s.surface !== surface).flatMap((s) => operationsOf(s.definition));
const guides = readGuides();

describe('rendered docs served by the service', () => {
  let api: ReturnType<typeof supertest>;
  before(async () => (api = supertest(await buildApp())));

  it('/ redirects to the general reference, where a person opening the address in a browser wants to land', async () => {
    await api.get('/').expect(302).expect('Location', DOCS_PATHS.general);
  });

  for (const spec of specs) {
    const path = DOCS_PATHS[spec.surface];

    it(`${path} is public HTML that loads the ${spec.surface} spec and Scalar from beside it`, async () => {
      const res = await api
        .get(path)
        .expect(200)
        .expect('Content-Type', /^text\/html/);
      assert.match(res.text, new RegExp(`"url":"${path}/openapi.json"`));
      assert.match(res.text, new RegExp(`<script src="${path}/standalone.js">`));
      assert.doesNotMatch(res.text, /<script>/, 'no inline script, so script-src stays self');
      const spec_ = await api.get(`${path}/openapi.json`).expect(200).expect('Content-Type', /json/);
      assert.deepEqual(spec_.body, spec.definition, `${path}/openapi.json is the bundled ${spec.surface} spec`);
      await api
        .get(`${path}/standalone.js`)
        .expect(200)
        .expect('Content-Type', /javascript/)
        .expect('Cache-Control', 'public, max-age=86400');
      await api
        .get(`${path.toUpperCase()}/`)
        .expect(200)
        .expect('Content-Type', /^text\/html/); // routed as Express routes: any case, a trailing slash
    });

    it(`${path} relaxes the content-security policy for Scalar and the try-it servers only`, async () => {
      const csp = directives((await api.get(path).expect(200)).headers['content-security-policy']);
      assert.deepEqual(csp['script-src'], ["'self'"]);
      assert.deepEqual(csp['style-src'], ["'self'", "'unsafe-inline'"]);
      assert.deepEqual(csp['connect-src'], [
        "'self'",
        ...new Set([...(spec.definition.servers ?? []).map((s) => new URL(s.url).origin), 'http://localhost:4010']),
      ]);
      assert.equal(csp['upgrade-insecure-requests'], undefined);
      const elsewhere = directives((await api.get('/no-such-page').expect(404)).headers['content-security-policy']);
      assert.equal(elsewhere['connect-src'], undefined, 'other routes keep helmet defaults');
      assert.deepEqual(elsewhere['upgrade-insecure-requests'], []);
    });
  }

  it('leaves everything else under /api/v1 to the partner surface', async () => {
    const res = await api
      .get('/api/v1/docs/nothing-here')
      .expect(404)
      .expect('Content-Type', /problem\+json/);
    assert.equal(res.body.code, 'not_found');
  });
});

describe('npm run docs', function () {
  this.timeout(180_000);
  let outDir: string;
  before(() => {
    outDir = mkdtempSync(join(tmpdir(), 'sc-docs-'));
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/docs.ts', '--out', outDir], {
      cwd: root,
      stdio: 'pipe',
    });
  });
  after(() => rmSync(outDir, { recursive: true, force: true }));

  it('writes index.html, openapi.json and standalone.js for every generated surface: the spec and Scalar the service sends', () => {
    for (const spec of specs) {
      const dir = join(outDir, spec.surface);
      assert.deepEqual(readdirSync(dir).sort(), ['index.html', 'openapi.json', 'standalone.js']);
      // The files the service's routes send (docsRoutes): the built page renders what the service's page renders.
      assert.ok(
        readFileSync(join(dir, 'openapi.json')).equals(readFileSync(spec.file)),
        `${spec.surface} openapi.json`,
      );
      assert.ok(readFileSync(join(dir, 'standalone.js')).equals(readFileSync(SCALAR_SCRIPT)), `${spec.surface} Scalar`);
    }
  });

  it('writes guides/index.html, a page for every other guide and their stylesheet', () => {
    assert.deepEqual(
      readdirSync(join(outDir, 'guides')).sort(),
      [...guides.map((g) => `${g.slug}.html`), 'guides.css'].sort(),
    );
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
      // The built page and the service's differ in their links and servers, not in what Scalar renders: the same
      // spec and script (above). Every operation is looked for once, on the service's page, under its content-security
      // policy; the built one shows that it loaded them by its relative links, at both ends of the spec.
      const ends = [own[0]!, own.at(-1)!];

      it(`the built ${spec.surface} docs, on a static host, load the spec and Scalar beside them: its first and last operations show, none of another surface`, async () => {
        await expectDocs(`${staticHost.url}/${spec.surface}/index.html`, spec.surface, ends);
      });

      it(`the service's ${DOCS_PATHS[spec.surface]} shows all ${own.length} operations under its content-security policy`, async () => {
        await expectDocs(`${service.baseUrl}${DOCS_PATHS[spec.surface]}`, spec.surface, own);
      });
    }

    // Each page's answer, for every link check of the suite (the static host and the service have different origins).
    const seen = new Map<string, { status: number; ids: Set<string> | undefined }>();

    for (const guide of guides) {
      it(`the guide ${guide.slug} on a static host lists every guide, loads cleanly, and each of its links resolves`, async () => {
        await expectGuide(`${staticHost.url}/guides/${guide.slug}.html`, guide);
      });

      it(`the guide ${guide.slug} as the service serves it lists every guide, loads cleanly, and each of its links resolves`, async () => {
        await expectGuide(`${service.baseUrl}${GUIDES_PATH}/${guide.slug === INDEX_SLUG ? '' : guide.slug}`, guide);
      });
    }

    /**
     * One page per host, taken from guide to guide: a new page costs a renderer's start, which a guide page (no script)
     * costs more than its own rendering does. Closed with the browser.
     */
    const guidePages = new Map<string, Promise<WatchedPage>>();

    async function expectGuide(url: string, guide: Guide) {
      const host = new URL(url).origin;
      if (!guidePages.has(host)) guidePages.set(host, openWatchedPage(browser));
      const { page, problems, errors } = await guidePages.get(host)!;
      // What the page did wrong is this guide's alone: the lists are emptied before it loads.
      problems.length = 0;
      errors.length = 0;
      assert.equal((await page.goto(url))?.status(), 200, url);
      // What the checks below read of the page, in one evaluation.
      const shown = await page.evaluate(() => ({
        title: document.title,
        nav: [...document.querySelectorAll('.guides-list a')].map((a) => [
          a.textContent,
          a.getAttribute('aria-current'),
        ]),
        references: [...document.querySelectorAll<HTMLElement>('.references-list a')].map((a) => a.innerText),
        scripts: document.querySelectorAll('script').length,
        display: getComputedStyle(document.body).display,
        // every link's target, as brokenLinks reads them
        hrefs: [...new Set([...document.querySelectorAll<HTMLAnchorElement>('a[href]')].map((a) => a.href))],
      }));
      assert.ok(shown.title.startsWith(guide.title), `the title of ${url} names ${guide.title}`);
      assert.deepEqual(
        shown.nav,
        guides.filter((g) => g.slug !== INDEX_SLUG).map((g) => [g.title, g.slug === guide.slug ? 'page' : null]),
        'the navigation lists every guide but the index, in order, this one marked',
      );
      assert.deepEqual(shown.references, specs.map(referenceTitle));
      assert.equal(shown.scripts, 0, 'a guide page has no script');
      // The stylesheet applied: the navigation is a column beside the guide.
      assert.equal(shown.display, 'grid');
      const { broken } = await brokenLinks(page, seen, shown.hrefs);
      assert.deepEqual(broken, [], `links of ${url} that lead nowhere`);
      assert.deepEqual(problems, [], `${url} loads cleanly`);
      assert.deepEqual(errors, [], `console errors on ${url}`);
    }

    /** Loads a reference page and looks on it for `shown`, operations of its surface. */
    async function expectDocs(url: string, surface: Surface, shown: DocumentedOperation[]) {
      const { page, problems } = await openWatchedPage(browser);
      try {
        await page.goto(url);
        const own = operationsBySurface.get(surface)!;
        assert.deepEqual(await missingOperations(page, shown), [], `operations missing from ${url}`);
        assert.deepEqual(
          await foreignOperations(page, othersThan(surface), own),
          [],
          `operations of another surface on ${url}`,
        );
        // The bar above Scalar is visible (Scalar's layout leaves room for it), and every link of the page answers.
        assert.ok(
          await page.locator('.docs-bar a', { hasText: 'Guides' }).isVisible(),
          `the link to the guides is visible on ${url}`,
        );
        assert.deepEqual((await brokenLinks(page, seen)).broken, [], `links of ${url} that lead nowhere`);
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
