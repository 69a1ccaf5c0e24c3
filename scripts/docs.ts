// npm run docs [-- --out DIR] [-- --source-url URL]
// Builds the rendered docs as static, publishable files: one folder per generated surface,
// DIR/<surface>/{index.html, openapi.json, standalone.js}, and the guides, DIR/guides/{index.html, <slug>.html,
// guides.css} (DIR defaults to docs-dist/). Every link between them is relative, so any static host serves them, at
// any path; they need no network. The pages are the same templates the running service serves at /docs,
// /api/v1/docs and /docs/guides/. A guide's link to a repository file outside docs/ (`../spec/…`) leads to
// URL + its path from the root when --source-url is given (e.g. https://github.com/ORG/REPO/blob/main/), and is plain
// text otherwise.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundledSpecs, type BundledSpec } from '../server/contract/bundled-specs.ts';
import { SCALAR_SCRIPT } from '../server/contract/scalar-bundle.ts';
import {
  DOCS_PATHS,
  MOCK_SERVER,
  docsBarLinks,
  docsPage,
  docsTitle,
  referenceTitle,
  specServers,
} from '../server/contract/docs.ts';
import { readGuides } from '../server/contract/guide-files.ts';
import { guidePage } from '../server/contract/guide-page.ts';
import { INDEX_SLUG, type SiteLinks } from '../server/contract/guide-site.ts';
import { GUIDES_STYLESHEET } from '../server/contract/guides-style.ts';

const GUIDES_DIR = 'guides';
const STYLESHEET = 'guides.css';

const { values } = parseArgs({
  options: { out: { type: 'string', default: 'docs-dist' }, 'source-url': { type: 'string' } },
});
const outDir = resolve(values.out);
const sourceUrl = values['source-url'];

const specs = bundledSpecs();
if (specs.length === 0) throw new Error('no generated/<surface>/openapi.json; run `npm run generate` first');

/** From a page one folder down (DIR/<surface>/ or DIR/guides/) to the reference of `spec`. */
const referenceHref = (spec: BundledSpec) => `../${spec.surface}/index.html`;

for (const spec of specs) {
  const dir = join(outDir, spec.surface);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  copyFileSync(spec.file, join(dir, 'openapi.json'));
  copyFileSync(SCALAR_SCRIPT, join(dir, 'standalone.js'));
  const bar = {
    stylesheet: `../${GUIDES_DIR}/${STYLESHEET}`,
    links: docsBarLinks(
      `../${GUIDES_DIR}/index.html`,
      specs.map((s) => ({ href: referenceHref(s), spec: s })),
      spec,
    ),
  };
  writeFileSync(
    join(dir, 'index.html'),
    docsPage({
      title: docsTitle(spec),
      specUrl: './openapi.json',
      scriptUrl: './standalone.js',
      servers: [...specServers(spec), MOCK_SERVER],
      bar,
    }),
  );
  console.log(`wrote ${join(dir, 'index.html')}`);
}

const links: SiteLinks = {
  guide: (slug) => `${slug}.html`,
  reference: (path) => {
    const spec = specs.find((s) => DOCS_PATHS[s.surface] === path);
    return spec && referenceHref(spec);
  },
  stylesheet: STYLESHEET,
  repositoryFile: (path) =>
    sourceUrl === undefined ? undefined : new URL(path, sourceUrl.endsWith('/') ? sourceUrl : `${sourceUrl}/`).href,
};
const guides = readGuides();
const site = {
  guides,
  references: specs.map((spec) => ({ path: DOCS_PATHS[spec.surface], title: referenceTitle(spec) })),
  links,
};
const guidesDir = join(outDir, GUIDES_DIR);
rmSync(guidesDir, { recursive: true, force: true });
mkdirSync(guidesDir, { recursive: true });
writeFileSync(join(guidesDir, STYLESHEET), GUIDES_STYLESHEET);
for (const guide of guides) writeFileSync(join(guidesDir, links.guide(guide.slug)), guidePage(site, guide));
console.log(
  `wrote ${guides.length} guides to ${guidesDir}${guides.some((g) => g.slug === INDEX_SLUG) ? '' : ' (no docs/index.md)'}`,
);
