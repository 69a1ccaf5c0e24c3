// One guide as an HTML page: its Markdown rendered by marked, headings given GitHub's anchors (github-slugger, so a
// link written for the repository's view of a guide finds the same heading here), and a navigation of every guide and
// both references. The page has no script at all. Where links lead depends on where the page is published
// (SiteLinks): the running service, or the static build.
import { posix } from 'node:path';
import GithubSlugger from 'github-slugger';
import { Marked, type Tokens } from 'marked';
import { plainText } from './guide-files.ts';
import { escapeHtml, htmlPage } from './html-page.ts';
import { GUIDES_PATH, INDEX_SLUG, type Guide, type Site, type SiteLinks } from './guide-site.ts';

/** The HTML page of one guide of the site. */
export function guidePage(site: Site, guide: Guide): string {
  const index = site.guides.find((g) => g.slug === INDEX_SLUG);
  const siteTitle = index?.title ?? 'Guides';
  const title = guide.slug === INDEX_SLUG ? siteTitle : `${guide.title} — ${siteTitle}`;
  const item = (href: string, text: string, current: boolean) =>
    `<li><a href="${escapeHtml(href)}"${current ? ' aria-current="page"' : ''}>${escapeHtml(text)}</a></li>`;
  const guides = site.guides
    .filter((g) => g.slug !== INDEX_SLUG)
    .map((g) => item(site.links.guide(g.slug), g.title, g.slug === guide.slug));
  const references = site.references.flatMap(({ path, title }) => {
    const href = site.links.reference(path);
    return href ? [item(href, title, false)] : [];
  });
  return htmlPage({
    title,
    stylesheet: site.links.stylesheet,
    bodyClass: 'guides',
    body: `    <nav class="guides-nav" aria-label="Guides and references">
      <a class="guides-home"${guide.slug === INDEX_SLUG ? ' aria-current="page"' : ''} href="${escapeHtml(site.links.guide(INDEX_SLUG))}">${escapeHtml(siteTitle)}</a>
      <p class="guides-nav-heading">Guides</p>
      <ul class="guides-list">
        ${guides.join('\n        ')}
      </ul>
      <p class="guides-nav-heading">Reference</p>
      <ul class="references-list">
        ${references.join('\n        ')}
      </ul>
    </nav>
    <main class="guide">
${renderMarkdown(guide.markdown, site)}
    </main>`,
  });
}

/** A guide's body as HTML, its links leading where `site.links` says. */
export function renderMarkdown(markdown: string, site: Pick<Site, 'guides' | 'links'>): string {
  const slugger = new GithubSlugger();
  const slugs = new Set(site.guides.map((g) => g.slug));
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        const id = slugger.slug(plainText(tokens));
        return `<h${depth} id="${id}"><a class="anchor" href="#${id}" aria-hidden="true">#</a>${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link(token: Tokens.Link) {
        const href = rewriteHref(token.href, slugs, site.links);
        if (href === undefined) return this.parser.parseInline(token.tokens);
        token.href = href;
        return false; // marked's own rendering, with the rewritten href
      },
    },
  });
  return marked.parse(markdown, { async: false });
}

/**
 * A link as written in docs/<slug>.md, for the page: another guide (`other.md#anchor`, or its served path), a reference
 * (`/docs`), a repository file (`../spec/…`) or anything absolute (kept). Undefined: no page to link to (plain text).
 */
export function rewriteHref(href: string, guideSlugs: Set<string>, links: SiteLinks): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('//')) return href;
  const [target = '', hash] = splitHash(href);
  const anchor = hash === undefined ? '' : `#${hash}`;
  const served = new RegExp(`^${GUIDES_PATH}(?:/([\\w.-]*))?$`).exec(target);
  if (served && (!served[1] || guideSlugs.has(served[1]))) return links.guide(served[1] || INDEX_SLUG) + anchor;
  if (target.startsWith('/')) return (links.reference(target.replace(/\/+$/, '') || '/') ?? target) + anchor;
  // Relative to docs/, as the repository's view of the file resolves it.
  const path = posix.normalize(posix.join('docs', target));
  const guide = /^docs\/([\w.-]+)\.md$/.exec(path)?.[1];
  if (guide !== undefined && guideSlugs.has(guide)) return links.guide(guide) + anchor;
  if (path.startsWith('../')) return undefined; // outside the repository
  const file = links.repositoryFile(path);
  return file === undefined ? undefined : file + anchor;
}

function splitHash(href: string): [string, string | undefined] {
  const at = href.indexOf('#');
  return at === -1 ? [href, undefined] : [href.slice(0, at), href.slice(at + 1)];
}
