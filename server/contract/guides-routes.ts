// The guides as the running service serves them: the index at GUIDES_PATH/ and each guide at GUIDES_PATH/<slug>,
// under a content-security policy that allows no script at all. Each page is rendered the first time it is asked
// for and kept: start-up reads no guide, and the files do not change under a running process.
import express from 'express';
import helmet from 'helmet';
import { INDEX_SLUG, readGuides } from './guide-files.ts';
import { guidePage, type ReferenceEntry, type Site, type SiteLinks } from './guide-page.ts';
import { GUIDES_STYLESHEET } from './guides-style.ts';

export const GUIDES_PATH = '/docs/guides';
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
  let site: Site | undefined;
  const pages = new Map<string, string>();
  const page = (slug: string): string | undefined => {
    site ??= { guides: readGuides(), references, links: servedLinks(references.map((r) => r.path)) };
    const guide = site.guides.find((g) => g.slug === slug);
    if (guide && !pages.has(slug)) pages.set(slug, guidePage(site, guide));
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
  router.get('/guides.css', (_req, res) => void res.type('css').set('Cache-Control', 'public, max-age=3600').send(GUIDES_STYLESHEET));
  const send = (slug: string, res: express.Response, next: express.NextFunction) => {
    const html = page(slug);
    if (html === undefined) return next();
    res.type('html').send(html);
  };
  router.get('/', (_req, res, next) => send(INDEX_SLUG, res, next));
  router.get('/:slug', (req, res, next) => send(req.params.slug, res, next));
  return router;
}
