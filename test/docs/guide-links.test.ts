// The guides hold together as a site: docs/index.md links every guide (its order is the site's navigation), every
// link between guides names a guide that exists and, with `#anchor`, one of its headings (GitHub's slugs), and the
// guides link nothing of the repository outside docs/ (a rendered page has no repository beside it).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedFiles, REPO } from './guide-blocks.ts';

/** Guides another part of the build writes from code (errors, configuration): linked, never hand-written. */
const GENERATED = ['errors.md', 'configuration.md'];

const textOf = (file: string) => readFileSync(join(REPO, file), 'utf8');
const withoutCode = (text: string) => text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '').replace(/`[^`\n]*`/g, '');

/** A heading's anchor as GitHub (and the usual Markdown renderers) make it. */
export function slugOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  return new Set([...withoutCode(textOf(file)).matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => slugOf(match[1]!)));
}

function linksOf(file: string): string[] {
  return [...withoutCode(textOf(file)).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

describe('the guides as a site', () => {
  const guides = documentedFiles().filter((file) => file.startsWith('docs/'));

  it('docs/index.md links every guide, the two references, and the generated pages', () => {
    const links = linksOf('docs/index.md');
    for (const guide of guides.filter((file) => file !== 'docs/index.md')) assert.ok(links.includes(guide.slice('docs/'.length)), `docs/index.md lacks ${guide}`);
    for (const page of [...GENERATED, '/docs', '/api/v1/docs']) assert.ok(links.includes(page), `docs/index.md lacks ${page}`);
  });

  for (const file of documentedFiles()) {
    it(`${file}: every link to a guide or a file of the repository reaches it`, () => {
      const inDocs = file.startsWith('docs/');
      for (const link of linksOf(file)) {
        if (/^(https?:|mailto:)/.test(link) || link.startsWith('/')) continue; // the web, or the references the service serves
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : join(inDocs ? 'docs' : '', path);
        if (inDocs) assert.ok(!path.includes('/'), `${file}: ${link} leaves docs/ (name repository files in code spans)`);
        const generated = GENERATED.some((name) => target === `docs/${name}`);
        if (!generated) assert.ok(existsSync(join(REPO, target)), `${file}: ${link} names no file`);
        if (anchor && !generated) assert.ok(anchorsOf(target).has(anchor), `${file}: ${link} names no heading of ${target}`);
      }
    });
  }
});
