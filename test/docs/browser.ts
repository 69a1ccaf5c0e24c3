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
 * How long an operation may take to show once the page is looking for it: it takes well under a second (Scalar renders a
 * section when an idle moment follows its scrolling into view), a bound only for a page that never shows it.
 */
const OPERATION_BOUND_MS = 30_000;
/**
 * After one operation was not shown (the test fails), how long each of the rest is looked for, so that the failure lists
 * them without a bound's wait for each (on a loaded machine, one that was only slow may be listed too).
 */
const AFTER_A_MISS_MS = 1_000;

/**
 * The operations the page does not show. Scalar renders each one as an element whose id ends in `/<METHOD><path>`,
 * holding its summary and its path; off-screen ones start as empty placeholders, rendered once scrolled into view. The
 * look runs in the page, one evaluation for all: the operations one after another in the page's order (each scroll
 * renders the next ones too), each scrolled to again on every change of the page until it shows, since sections above
 * it that render meanwhile push it out of view, and a placeholder out of view is never rendered. It waits on the page's
 * changes (a MutationObserver), not on a clock; a look every 500 ms besides is only a safety net.
 */
export async function missingOperations(page: Page, operations: DocumentedOperation[]): Promise<string[]> {
  const looks = operations.map((op) => ({
    suffix: `/${op.method}${op.path}`,
    summary: op.summary,
    path: op.path,
    name: `${op.operationId} (${op.method} ${op.path}, "${op.summary}")`,
  }));
  // tsx compiles this file keeping functions' names (esbuild's keepNames), which wraps the named functions below in
  // a helper, __name, that the page does not have: it is given one that leaves them as they are.
  await page.evaluate('globalThis.__name ??= (target) => target');
  return page.evaluate(
    async ({ looks, boundMs, afterMissMs }) => {
      type Look = (typeof looks)[number];
      const shows = (element: Element, one: Look) => {
        const text = element.textContent ?? '';
        return (
          element.getAttribute('data-placeholder') !== 'true' && text.includes(one.summary) && text.includes(one.path)
        );
      };
      /**
       * Whether an element of the operation shows it; if none does, the first one laid out (a placeholder, or a
       * section still rendering) is scrolled to when it is out of view. Every element whose id ends so is looked at, each time: an element
       * found once may be replaced (a section in place of its placeholder, a document mounted again).
       */
      const look = (one: Look) => {
        const elements = [...document.querySelectorAll(`[id$="${CSS.escape(one.suffix)}"]`)];
        if (elements.some((element) => shows(element, one))) return true;
        const target = elements.find((element) => element.getClientRects().length > 0);
        const box = target?.getBoundingClientRect();
        // Scrolled to only when out of view: scrolling one in view again, on every change, kept Scalar from rendering.
        if (box && (box.bottom <= 0 || box.top >= innerHeight)) target!.scrollIntoView({ block: 'start' });
        return false;
      };
      /** Resolves true once `one` shows, false after `ms` without. */
      const shown = (one: Look, ms: number) =>
        new Promise<boolean>((resolve) => {
          let pending = false;
          const check = () => {
            pending = false;
            if (look(one)) finish(true);
          };
          const observer = new MutationObserver(() => {
            if (!pending) {
              pending = true;
              requestAnimationFrame(check);
            }
          });
          const net = setInterval(check, 500);
          const bound = setTimeout(() => finish(look(one)), ms);
          function finish(value: boolean) {
            observer.disconnect();
            clearInterval(net);
            clearTimeout(bound);
            resolve(value);
          }
          observer.observe(document.documentElement, {
            subtree: true,
            childList: true,
            attributes: true,
            characterData: true,
          });
          check();
        });
      /** `rest` in the page's order (of their sections, placeholders or not), those not on the page yet last. */
      const inPageOrder = (rest: Look[]) => {
        const all = [...document.querySelectorAll('[id]')].map((element) => element.id);
        const at = (one: Look) => {
          const index = all.findIndex((id) => id.endsWith(one.suffix));
          return index < 0 ? all.length : index;
        };
        const order = new Map(rest.map((one) => [one, at(one)]));
        return rest.toSorted((a, b) => order.get(a)! - order.get(b)!);
      };
      const missing: string[] = [];
      const lookFor = async (one: Look) => {
        if (!(await shown(one, missing.length === 0 ? boundMs : afterMissMs))) missing.push(one.name);
      };
      // The first as given: its look waits for the page to render; then the rest in the page's order.
      const [first, ...others] = looks;
      if (first) await lookFor(first);
      for (const one of inPageOrder(others)) await lookFor(one);
      return missing;
    },
    { looks, boundMs: OPERATION_BOUND_MS, afterMissMs: AFTER_A_MISS_MS },
  );
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
