// The browser of the docs tests: Debian's Chromium driven by playwright-core, and the checks run in its pages.
// Without /usr/bin/chromium the suite is pending with a message, or fails under REQUIRE_TEST_TOOLS=1 (CI), so a
// missing browser never passes silently.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { Context } from 'mocha';
import { OpenAPIRouter, type Document } from 'openapi-backend';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches Chromium for a suite, or makes the suite pending (fails it with REQUIRE_TEST_TOOLS=1) when it is absent.
 * playwright gives each launch a fresh temporary profile (user-data-dir) and removes it on close.
 */
export async function launchOrSkip(context: Context): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    const message = `${CHROMIUM} is missing: the rendered-docs browser tests did not run (apt-get install -y chromium)`;
    if (process.env.REQUIRE_TEST_TOOLS === '1') throw new Error(`${message}; REQUIRE_TEST_TOOLS=1 demands them`);
    console.warn(`    PENDING: ${message}`);
    context.skip();
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
};

/** A plain static file server over a directory, like any host the built docs would be published on. */
export async function serveDirectory(root: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    const file = path.endsWith('/') ? join(path, 'index.html') : path;
    if (!file.startsWith(root) || !existsSync(file)) return void res.writeHead(404).end();
    res
      .writeHead(200, { 'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' })
      .end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

export interface DocumentedOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
}

export function operationsOf(definition: Document): DocumentedOperation[] {
  return new OpenAPIRouter({ definition }).getOperations().map((op) => ({
    operationId: op.operationId ?? '',
    method: op.method.toUpperCase(),
    path: op.path,
    summary: op.summary ?? '',
  }));
}

export interface WatchedPage {
  page: Page;
  /** What the page did wrong while loading (watchPage), as it happens. */
  problems: string[];
  /** Its console errors (watchConsoleErrors), as they happen. */
  errors: string[];
}

/** A new page of `browser`, watched from before its first load. */
export async function openWatchedPage(browser: Browser): Promise<WatchedPage> {
  const page = await browser.newPage();
  return { page, problems: await watchPage(page), errors: watchConsoleErrors(page) };
}

/** What a page did wrong while loading: failed requests (bar the favicon) and CSP violations. */
async function watchPage(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on('requestfailed', (request) =>
    problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
      problems.push(`${response.status()} for ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.text().startsWith('CSP violation:')) problems.push(message.text());
  });
  // Zod, inside Scalar, probes for eval once (`Function('')` in a try) and falls back without it: not a problem.
  await page.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (e) => {
      if (e.blockedURI !== 'eval') console.log(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI}`);
    }),
  );
  return problems;
}

/**
 * Asserts that the page shows every operation: Scalar renders each one as an element whose id ends in
 * `/<METHOD><path>` (off-screen ones start as empty placeholders, so each is scrolled to), holding its summary
 * and its path. Returns the operations it could not find.
 */
export async function missingOperations(page: Page, operations: DocumentedOperation[]): Promise<string[]> {
  const missing: string[] = [];
  for (const op of operations)
    if (!(await showsOperation(page, op))) missing.push(`${op.operationId} (${op.method} ${op.path}, "${op.summary}")`);
  return missing;
}

/**
 * Whether the page shows one operation within 20 s. It scrolls to the section again on every look that does not find
 * it shown: sections above it that render meanwhile push it out of view, and a placeholder out of view is never
 * rendered. A look is one native selector query in the page: a query of every element with an id, wrapped for
 * JavaScript, cost the renderer more than drawing the section did, on each of the ~70 operations a page has.
 */
async function showsOperation(page: Page, op: DocumentedOperation): Promise<boolean> {
  const suffix = `/${op.method}${op.path}`;
  const section = page.locator(`[id$="${suffix}"]`).first();
  const shown = () =>
    page.evaluate(
      ({ suffix, summary, path }) => {
        const element = document.querySelector(`[id$="${CSS.escape(suffix)}"]`);
        const text = element?.textContent ?? '';
        return element?.getAttribute('data-placeholder') !== 'true' && text.includes(summary) && text.includes(path);
      },
      { suffix, summary: op.summary, path: op.path },
    );
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await shown()) return true;
    await section.scrollIntoViewIfNeeded({ timeout: 2_000 }).catch(() => undefined);
    if (await shown()) return true;
    await page.waitForTimeout(200);
  }
  return false;
}

/** The operations of `others` whose section or summary appears on the page (summaries shared with `own` aside). */
export async function foreignOperations(
  page: Page,
  others: DocumentedOperation[],
  own: DocumentedOperation[],
): Promise<string[]> {
  const text = await page.evaluate(() => document.body.innerText);
  const ids = await page.evaluate(() => [...document.querySelectorAll('[id]')].map((e) => e.id));
  const ownSummaries = new Set(own.map((op) => op.summary));
  return others
    .filter(
      (op) =>
        ids.some((id) => id.endsWith(`/${op.method}${op.path}`)) ||
        (!ownSummaries.has(op.summary) && text.includes(op.summary)),
    )
    .map((op) => `${op.operationId} (${op.method} ${op.path})`);
}

/**
 * Console errors of a page. A resource that failed to load is logged as one too; watchPage reports those (bar the
 * favicon) by their response, so they are left to it.
 */
function watchConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return errors;
}

/**
 * The links of the open page that lead nowhere: a page of the same origin that does not answer 200, or an anchor
 * (`#id`) that a guide page does not have. Links to other origins are not followed (the tests have no network) and
 * are returned apart. The anchors of a reference page are made by Scalar in the browser and are not checked.
 * `seen` caches each page's answer across calls.
 */
export async function brokenLinks(
  page: Page,
  seen: Map<string, { status: number; ids: Set<string> | undefined }>,
  /** The page's links (each `a[href]`'s href, once), when the caller read them already. */
  links?: string[],
): Promise<{ broken: string[]; external: string[] }> {
  const here = new URL(page.url());
  const hrefs =
    links ??
    (await page.evaluate(() => [
      ...new Set([...document.querySelectorAll('a[href]')].map((a) => (a as HTMLAnchorElement).href)),
    ]));
  const broken: string[] = [];
  const external: string[] = [];
  for (const href of hrefs) {
    const url = URL.canParse(href) ? new URL(href) : undefined;
    if (!url) {
      broken.push(`${href}: not a URL`);
      continue;
    }
    if (url.origin !== here.origin) {
      external.push(href);
      continue;
    }
    const target = url.href.replace(/#.*$/, '');
    if (!seen.has(target)) {
      const response = await page.request.get(target);
      const html = (response.headers()['content-type'] ?? '').startsWith('text/html') ? await response.text() : '';
      // A guide page (its body says so) has its anchors in its HTML.
      const ids = /<body class="guides">/.test(html)
        ? new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!))
        : undefined;
      seen.set(target, { status: response.status(), ids });
    }
    const { status, ids } = seen.get(target)!;
    const anchor = decodeURIComponent(url.hash.slice(1));
    if (status !== 200) broken.push(`${href}: ${status}`);
    else if (anchor && ids && !ids.has(anchor)) broken.push(`${href}: no element with id "${anchor}"`);
  }
  return { broken, external };
}
