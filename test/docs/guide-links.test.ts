// What the guides say to each other, checked on their text: docs/index.md links every guide (its order is the site's
// navigation), both references and the generated pages, and the README links every guide (one line each); every link of
// the README and the guides to a guide or a file reaches it and, with `#anchor`, one of its headings; the guides link
// nothing of the repository outside docs/ (a rendered page has no repository beside it). Links and anchors are read as
// the site reads them (marked, and GitHub's slugs with github-slugger), so a link that passes here works on GitHub and
// on the site alike. How the site renders and serves them: guides.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import GithubSlugger from 'github-slugger';
import { Lexer, type Tokens } from 'marked';
import { markdownLinks, plainText } from '../../server/contract/guide-files.ts';
import { documentedFiles, REPO } from './guide-blocks.ts';

/** Guides `npm run generate` writes from code (errors, configuration): linked from the index like the others. */
const GENERATED = ['errors.md', 'configuration.md'];

const textOf = (file: string) => readFileSync(join(REPO, file), 'utf8');
const linksOf = (file: string) => markdownLinks(textOf(file));

/** The anchors of a file's headings, as GitHub and the site make them (a repeated heading gets `-1`, `-2`…). */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const headings = new Lexer().lex(textOf(file)).filter((token): token is Tokens.Heading => token.type === 'heading');
  return new Set(headings.map((heading) => slugger.slug(plainText(heading.tokens))));
}

describe('the guides as a text', () => {
  const guides = documentedFiles().filter((file) => file.startsWith('docs/'));

  it('docs/index.md links every guide, the two references, and the generated pages', () => {
    const links = linksOf('docs/index.md').map((link) => link.replace(/^\.\//, '').split('#')[0]!);
    for (const guide of guides.filter((file) => file !== 'docs/index.md'))
      assert.ok(links.includes(guide.slice('docs/'.length)), `docs/index.md lacks ${guide}`);
    for (const page of [...GENERATED, '/docs', '/api/v1/docs'])
      assert.ok(links.includes(page), `docs/index.md lacks ${page}`);
  });

  it('README.md links every guide', () => {
    const links = new Set(linksOf('README.md').map((link) => link.split('#')[0]!));
    const missing = guides.filter((guide) => !links.has(guide));
    assert.deepEqual(missing, [], 'guides the README does not link');
  });

  for (const file of documentedFiles()) {
    it(`${file}: every link to a guide or a file of the repository reaches it`, () => {
      const inDocs = file.startsWith('docs/');
      for (const link of linksOf(file)) {
        if (/^(https?:|mailto:)/.test(link) || link.startsWith('/')) continue; // the web, or the references the service serves
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : join(inDocs ? 'docs' : '', path);
        if (inDocs)
          assert.ok(
            !path.includes('/') || (path.startsWith('./') && !path.slice(2).includes('/')),
            `${file}: ${link} leaves docs/ (name repository files in code spans)`,
          );
        assert.ok(existsSync(join(REPO, target)), `${file}: ${link} names no file`);
        if (anchor) assert.ok(anchorsOf(target).has(anchor), `${file}: ${link} names no heading of ${target}`);
      }
    });
  }
});
