// The guides: Markdown files docs/<slug>.md of the repository, docs/index.md their index. Their order is the order in
// which the index links them; a guide the index does not link comes after, alphabetically (and a test fails on it).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Lexer, Parser, type Token, type Tokens } from 'marked';
import { docsDirectory } from './docs-directory.ts';
import { INDEX_SLUG, type Guide } from './guide-site.ts';

/** Every docs/*.md in the order of the index's links (the index first), then the unlinked ones alphabetically. */
export function readGuides(dir = docsDirectory()): Guide[] {
  if (!existsSync(dir)) return [];
  const guides = readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name): Guide => {
      const markdown = readFileSync(join(dir, name), 'utf8');
      const slug = basename(name, '.md');
      return { slug, title: firstHeading(markdown) ?? slug, markdown };
    });
  const order = [INDEX_SLUG, ...linkedFromIndex(guides)];
  const rank = (slug: string) => (order.includes(slug) ? order.indexOf(slug) : order.length);
  return guides.sort((a, b) => rank(a.slug) - rank(b.slug) || a.slug.localeCompare(b.slug));
}

/** The slugs of the guides docs/index.md links to, in the order of their first link. */
export function linkedFromIndex(guides: Guide[]): string[] {
  const index = guides.find((guide) => guide.slug === INDEX_SLUG);
  if (!index) return [];
  const slugs = new Set(guides.map((guide) => guide.slug));
  const linked = markdownLinks(index.markdown)
    .map((href) => /^(?:\.\/)?([\w.-]+)\.md(?:#.*)?$/.exec(href)?.[1])
    .filter((slug): slug is string => slug !== undefined && slug !== INDEX_SLUG && slugs.has(slug));
  return [...new Set(linked)];
}

/** Every link target of a Markdown text, in order. */
export function markdownLinks(markdown: string): string[] {
  return links(new Lexer().lex(markdown));
}

function links(tokens: Token[]): string[] {
  return tokens.flatMap((token) => {
    const own = token.type === 'link' ? [(token as Tokens.Link).href] : [];
    const children = 'tokens' in token && token.tokens ? links(token.tokens) : [];
    const items = token.type === 'list' ? links((token as Tokens.List).items) : [];
    const cells =
      token.type === 'table'
        ? links(
            [...(token as Tokens.Table).header, ...(token as Tokens.Table).rows.flat()].flatMap((cell) => cell.tokens),
          )
        : [];
    return [...own, ...children, ...items, ...cells];
  });
}

function firstHeading(markdown: string): string | undefined {
  const heading = new Lexer()
    .lex(markdown)
    .find((token): token is Tokens.Heading => token.type === 'heading' && token.depth === 1);
  return heading && plainText(heading.tokens);
}

/** Inline Markdown as the text a reader sees (no markup, no entities). */
export function plainText(tokens: Token[]): string {
  const parser = new Parser();
  return parser.parseInline(tokens, parser.textRenderer).trim();
}
