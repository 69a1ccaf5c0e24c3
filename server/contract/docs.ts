// Rendered API reference (Scalar) for each surface: one HTML template shared by the running service (served
// below) and the static build (scripts/docs.ts). Scalar's standalone bundle is self-contained, so the pages
// work offline; the bundled spec is fetched by the page from next to it, so a surface's page shows that
// surface's spec only. A bar above Scalar links the guides (guides-routes.ts) and the other references.
import express, { type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Surface } from './surfaces.ts';
import { sharedBundledSpecs, type BundledSpec } from './bundled-specs.ts';
import type { ReferenceEntry } from './guide-site.ts';
import { escapeHtml, htmlPage } from './html-page.ts';
import { SCALAR_SCRIPT } from './scalar-bundle.ts';
import { GUIDES_PATH, GUIDES_STYLESHEET_PATH, guidesRoutes } from './guides-routes.ts';

/** Where the service serves each surface's docs (a new surface fails to compile until it has a path here). */
export const DOCS_PATHS: Record<Surface, string> = { general: '/docs', 'partner-v1': '/api/v1/docs' };

/** The mock server at its default port (scripts/mock.ts), offered to the try-it console beside the spec's servers. */
export const MOCK_SERVER = {
  url: 'http://localhost:4010',
  description: 'Mock server (`npm run mock`), answers from the examples',
};

export interface ServerEntry {
  url: string;
  description?: string;
}

export interface DocsPageOptions {
  title: string;
  /** URL of the bundled spec, relative to the page or absolute. */
  specUrl: string;
  /** URL of Scalar's standalone.js. */
  scriptUrl: string;
  /** The servers the try-it console can send requests to, first one preselected. */
  servers: ServerEntry[];
  /** The bar above the reference: links to the guides and to each reference. */
  bar: DocsBar;
}

export interface DocsBar {
  /** URL of the guides' stylesheet, which styles the bar. */
  stylesheet: string;
  links: Array<{ href: string; text: string; current?: boolean }>;
}

/** The one HTML page of the rendered docs. Configuration goes in a data attribute: no inline script to allow. */
export function docsPage({ title, specUrl, scriptUrl, servers, bar }: DocsPageOptions): string {
  const configuration = {
    url: specUrl,
    servers: uniqueByUrl(servers),
    // Offline and quiet: no web fonts from Scalar's CDN, no telemetry, no hosted AI agent or MCP button.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    // Every tag open, so each operation is listed in the sidebar without a click.
    defaultOpenAllTags: true,
    documentDownloadType: 'json',
    metaData: { title },
  };
  return htmlPage({
    title,
    stylesheet: bar.stylesheet,
    body: `    <header class="docs-bar">
      ${bar.links.map(({ href, text, current }) => `<a href="${escapeHtml(href)}"${current ? ' aria-current="page"' : ''}>${escapeHtml(text)}</a>`).join('\n      ')}
    </header>
    <script id="api-reference" type="application/json" data-configuration='${escapeJsonAttribute(JSON.stringify(configuration))}'></script>
    <script src="${escapeHtml(scriptUrl)}"></script>`,
  });
}

export function docsTitle(spec: BundledSpec): string {
  return `${referenceTitle(spec)} — reference`;
}

/** How the guides and the bar name a surface's reference. */
export function referenceTitle(spec: BundledSpec): string {
  return `${spec.definition.info.title} ${spec.definition.info.version}`;
}

/** The bar's links: the guides, then each reference, `current` marked. */
export function docsBarLinks(
  guides: string,
  references: Array<{ href: string; spec: BundledSpec }>,
  current: BundledSpec,
): DocsBar['links'] {
  return [
    { href: guides, text: 'Guides' },
    ...references.map(({ href, spec }) => ({ href, text: referenceTitle(spec), current: spec === current })),
  ];
}

export function specServers(spec: BundledSpec): ServerEntry[] {
  return (spec.definition.servers ?? []).map(({ url, description }) => ({
    url,
    ...(description ? { description } : {}),
  }));
}

/**
 * The docs routes: the guides at GUIDES_PATH; for each generated surface, its page at DOCS_PATHS[surface], the
 * bundled spec at `<path>/openapi.json` and Scalar's script at `<path>/standalone.js`. Public: no credentials needed.
 */
export function docsRoutes(specs: BundledSpec[] = sharedBundledSpecs()): express.Router {
  const router = express.Router();
  const references: ReferenceEntry[] = specs.map((spec) => ({
    path: DOCS_PATHS[spec.surface],
    title: referenceTitle(spec),
  }));
  router.use(GUIDES_PATH, guidesRoutes(references));
  const barReferences = specs.map((spec) => ({ href: DOCS_PATHS[spec.surface], spec }));
  for (const spec of specs) {
    const path = DOCS_PATHS[spec.surface];
    const servers = specServers(spec);
    router.use(path, docsContentSecurityPolicy([...servers, MOCK_SERVER]));
    router.get(path, (req: Request, res: Response) => {
      // The service the page came from first, so the try-it console calls this instance by default.
      const self = { url: `${req.protocol}://${req.get('host')}`, description: 'This instance' };
      const bar = { stylesheet: GUIDES_STYLESHEET_PATH, links: docsBarLinks(`${GUIDES_PATH}/`, barReferences, spec) };
      res.type('html').send(
        docsPage({
          title: docsTitle(spec),
          specUrl: `${path}/openapi.json`,
          scriptUrl: `${path}/standalone.js`,
          servers: [self, ...servers, MOCK_SERVER],
          bar,
        }),
      );
    });
    router.get(`${path}/openapi.json`, (_req, res) => res.sendFile(spec.file));
    router.get(`${path}/standalone.js`, (_req, res) => res.sendFile(SCALAR_SCRIPT, { maxAge: '1d' }));
  }
  return router;
}

/**
 * helmet's default CSP, relaxed for the docs pages only:
 * - style-src 'unsafe-inline': Scalar injects its stylesheet and style attributes at run time;
 * - img-src/font-src data: and blob: for its inlined icons and the spec download link;
 * - connect-src: the page fetches its spec from 'self', and the try-it console calls the spec's servers and
 *   the mock server, which may be other origins;
 * - no upgrade-insecure-requests: those servers are plain-http local addresses.
 * Scripts stay 'self' only: the page has no inline script.
 */
function docsContentSecurityPolicy(servers: ServerEntry[]) {
  const origins = [...new Set(servers.flatMap(({ url }) => (URL.canParse(url) ? [new URL(url).origin] : [])))];
  return helmet.contentSecurityPolicy({
    useDefaults: true,
    directives: {
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:', 'blob:'],
      'font-src': ["'self'", 'data:'],
      'connect-src': ["'self'", ...origins],
      'upgrade-insecure-requests': null,
    },
  });
}

function uniqueByUrl(servers: ServerEntry[]): ServerEntry[] {
  return servers.filter((server, index) => servers.findIndex((s) => s.url === server.url) === index);
}

/** For the JSON in the single-quoted data-configuration: its double quotes stay as they are, readable. */
function escapeJsonAttribute(text: string): string {
  return text.replace(/[&<>']/g, (c) => `&#${c.charCodeAt(0)};`);
}
