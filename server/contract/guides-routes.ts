// The guides as the running service serves them: the index at GUIDES_PATH/ and each guide at GUIDES_PATH/<slug>,
// under a content-security policy that allows no script at all. Each page is rendered the first time it is asked
// for and kept: start-up reads no guide and loads no Markdown renderer (the bundle keeps it in a chunk of its own),
// and the files do not change under a running process.
import express from 'express';
import helmet from 'helmet';
import { GUIDES_PATH, INDEX_SLUG, type ReferenceEntry, type Site, type SiteLinks } from './guide-site.ts';
import { GUIDES_STYLESHEET } from './guides-style.ts';

export { GUIDES_PATH };
export const GUIDES_STYLESHEET_PATH = `${GUIDES_PATH}/guides.css`;

export function servedLinks(referencePaths: string[]): SiteLinks {
  return {
    guide: (slug) => (slug === INDEX_SLUG ? `${GUIDES_PATH}/` : `${GUIDES_PATH}/${slug}`),
    reference: (path) => (referencePaths.includes(path) ? path : undefined),
    stylesheet: GUIDES_STYLESHEET_PATH,
    // The running service does not know where its source is published.
    repositoryFile: () => undefined,
  };
}

/** The router to mount at GUIDES_PATH. */
export function guidesRoutes(references: ReferenceEntry[]): express.Router {
  const router = express.Router();
  const pages = new Map<string, string>();
  let renderer: Promise<(slug: string) => string | undefined> | undefined;
  const page = async (slug: string): Promise<string | undefined> => {
    // A failed load (a guide that cannot be read) is tried again on the next request, not kept.
    renderer ??= guideRenderer(references).catch((error: unknown) => {
      renderer = undefined;
      throw error;
    });
    if (!pages.has(slug)) {
      const html = (await renderer)(slug);
      if (html !== undefined) pages.set(slug, html);
    }
    return pages.get(slug);
  };
  router.use(
    helmet.contentSecurityPolicy({
      useDefaults: true,
      directives: {
        'script-src': ["'none'"],
        'style-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        // Links lead to this origin's other pages over the scheme the page came by, plain http on a local instance.
        'upgrade-insecure-requests': null,
      },
    }),
  );
  router.get(
    '/guides.css',
    (_req, res) => void res.type('css').set('Cache-Control', 'public, max-age=3600').send(GUIDES_STYLESHEET),
  );
  const send = async (slug: string, res: express.Response, next: express.NextFunction) => {
    const html = await page(slug);
    if (html === undefined) return next();
    res.type('html').send(html);
  };
  router.get('/', (_req, res, next) => send(INDEX_SLUG, res, next));
  router.get('/:slug', (req, res, next) => send(req.params.slug, res, next));
  return router;
}

/** Reads the guides and loads the renderer (marked), once: a function from a slug to its page, undefined for no guide. */
async function guideRenderer(references: ReferenceEntry[]): Promise<(slug: string) => string | undefined> {
  const [{ readGuides }, { guidePage }] = await Promise.all([import('./guide-files.ts'), import('./guide-page.ts')]);
  const site: Site = { guides: readGuides(), references, links: servedLinks(references.map((r) => r.path)) };
  return (slug) => {
    const guide = site.guides.find((g) => g.slug === slug);
    return guide && guidePage(site, guide);
  };
}
