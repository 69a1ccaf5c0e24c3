// What the guides' site is made of: the guides (docs/<slug>.md), the references beside them, and where links lead
// where the site is published. Only names here, so the service can load the rendering (marked) on the first request
// for a guide rather than at start.

/** Where the running service serves the guides (guides-routes.ts). */
export const GUIDES_PATH = '/docs/guides';

/** The slug of docs/index.md, the guides' index. */
export const INDEX_SLUG = 'index';

export interface Guide {
  slug: string;
  /** The text of its first level-1 heading, or its slug. */
  title: string;
  markdown: string;
}

/** Where a page's links lead, for one place the guides are published. */
export interface SiteLinks {
  /** A guide's page (the index's for INDEX_SLUG). */
  guide(slug: string): string;
  /** The page of the reference served at a DOCS_PATHS path, or undefined when the path is not one. */
  reference(path: string): string | undefined;
  /** The site's stylesheet. */
  stylesheet: string;
  /**
   * A file of the repository outside docs/ (its path from the root, e.g. `spec/general/openapi.yaml`), or undefined
   * when the published pages have no repository to link to: the link's text stays, as plain text.
   */
  repositoryFile(path: string): string | undefined;
}

export interface ReferenceEntry {
  /** Its DOCS_PATHS path, e.g. /docs. */
  path: string;
  title: string;
}

export interface Site {
  guides: Guide[];
  references: ReferenceEntry[];
  links: SiteLinks;
}
