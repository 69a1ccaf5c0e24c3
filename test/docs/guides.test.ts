// The guides' site without a browser: the pages it needs, the guides' order, their links as served and as built; the
// service serves them at /docs/guides/ with no script allowed, and the references link to them. What the guides' text
// links (the index, links that resolve): guide-links.test.ts. docs.test.ts opens the pages in a browser.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { DOCS_PATHS } from '../../server/contract/docs.ts';
import { readGuides } from '../../server/contract/guide-files.ts';
import { renderMarkdown, rewriteHref } from '../../server/contract/guide-page.ts';
import { INDEX_SLUG, type SiteLinks } from '../../server/contract/guide-site.ts';
import { GUIDES_PATH, servedLinks } from '../../server/contract/guides-routes.ts';
import { buildApp } from '../support/partner-app.ts';

const guides = readGuides();
const slugs = new Set(guides.map((g) => g.slug));

describe('the guides in docs/', () => {
  it('has an index, the errors guide and the configuration guide', () => {
    for (const slug of [INDEX_SLUG, 'errors', 'configuration'])
      assert.ok(slugs.has(slug), `docs/${slug}.md is missing`);
  });

  it('orders them as the index links them, the unlinked ones after, alphabetically', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sc-guides-'));
    try {
      writeFileSync(
        join(dir, 'index.md'),
        '# Site\n\n- [B](b.md)\n- [A](./a.md#part)\n- [B again](b.md)\n- [Nowhere](missing.md)\n',
      );
      for (const slug of ['a', 'b', 'd', 'c'])
        writeFileSync(join(dir, `${slug}.md`), `# Guide ${slug.toUpperCase()}\n`);
      assert.deepEqual(
        readGuides(dir).map((g) => [g.slug, g.title]),
        [
          ['index', 'Site'],
          ['b', 'Guide B'],
          ['a', 'Guide A'],
          ['c', 'Guide C'],
          ['d', 'Guide D'],
        ],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a guide rendered', () => {
  const staticLinks: SiteLinks = {
    guide: (slug) => `${slug}.html`,
    reference: (path) => ({ '/docs': '../general/index.html', '/api/v1/docs': '../partner-v1/index.html' })[path],
    stylesheet: 'guides.css',
    repositoryFile: () => undefined,
  };
  const known = new Set(['index', 'errors']);

  it('leads links to guides, references and repository files where the site publishes them', () => {
    const served = servedLinks(Object.values(DOCS_PATHS));
    const cases: Array<[string, string | undefined, string | undefined]> = [
      // href as written, served, static
      ['errors.md', `${GUIDES_PATH}/errors`, 'errors.html'],
      ['./errors.md#problem-codes', `${GUIDES_PATH}/errors#problem-codes`, 'errors.html#problem-codes'],
      ['index.md', `${GUIDES_PATH}/`, 'index.html'],
      [`${GUIDES_PATH}/errors#retry`, `${GUIDES_PATH}/errors#retry`, 'errors.html#retry'],
      [`${GUIDES_PATH}/`, `${GUIDES_PATH}/`, 'index.html'],
      ['/docs', '/docs', '../general/index.html'],
      ['/api/v1/docs/', '/api/v1/docs', '../partner-v1/index.html'],
      ['/api/v1/docs#tag/universities', '/api/v1/docs#tag/universities', '../partner-v1/index.html#tag/universities'],
      ['#local', '#local', '#local'],
      [
        'https://www.rfc-editor.org/rfc/rfc9457',
        'https://www.rfc-editor.org/rfc/rfc9457',
        'https://www.rfc-editor.org/rfc/rfc9457',
      ],
      ['../spec/general/openapi.yaml', undefined, undefined],
      ['../../elsewhere.md', undefined, undefined],
    ];
    for (const [href, asServed, asBuilt] of cases) {
      assert.equal(rewriteHref(href, known, served), asServed, `${href} served`);
      assert.equal(rewriteHref(href, known, staticLinks), asBuilt, `${href} built`);
    }
    const withSource = {
      ...staticLinks,
      repositoryFile: (path: string) => `https://git.example/repo/blob/main/${path}`,
    };
    assert.equal(
      rewriteHref('../spec/general/openapi.yaml#L3', known, withSource),
      'https://git.example/repo/blob/main/spec/general/openapi.yaml#L3',
    );
  });

  it("keeps the text of a link with no page to lead to, gives headings GitHub's anchors and keeps code blocks' language", () => {
    const html = renderMarkdown(
      '# Errors & `codes`\n\n## Retry\n\n## Retry\n\nSee [the spec](../spec/x.yaml) and [codes](errors.md#retry).\n\n```ts\nconst a = 1 < 2;\n```\n',
      {
        guides: [...known].map((slug) => ({ slug, title: slug, markdown: '' })),
        links: staticLinks,
      },
    );
    assert.match(html, /<h1 id="errors--codes"><a class="anchor" href="#errors--codes"/);
    assert.match(html, /<h2 id="retry">.*<h2 id="retry-1">/s);
    assert.match(html, /See the spec and <a href="errors.html#retry">codes<\/a>/);
    assert.match(html, /<pre><code class="language-ts">const a = 1 &lt; 2;/);
  });
});

describe('the guides served by the service', () => {
  let api: ReturnType<typeof supertest>;
  before(async () => (api = supertest(await buildApp())));

  it(`serves the index at ${GUIDES_PATH}/ and every guide at ${GUIDES_PATH}/<slug>, with no script and a policy that allows none`, async () => {
    for (const guide of guides) {
      const path = guide.slug === INDEX_SLUG ? `${GUIDES_PATH}/` : `${GUIDES_PATH}/${guide.slug}`;
      const res = await api
        .get(path)
        .expect(200)
        .expect('Content-Type', /^text\/html/);
      assert.doesNotMatch(res.text, /<script/i, `${path} has a script`);
      assert.match(res.text, new RegExp(`<link rel="stylesheet" href="${GUIDES_PATH}/guides.css" />`));
      const csp = res.headers['content-security-policy'] as string;
      assert.match(csp, /script-src 'none'/);
      assert.match(csp, /style-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /upgrade-insecure-requests/, 'a local instance serves plain http');
    }
    await api
      .get(GUIDES_PATH)
      .expect(200)
      .expect('Content-Type', /^text\/html/);
    await api
      .get(`${GUIDES_PATH}/guides.css`)
      .expect(200)
      .expect('Content-Type', /^text\/css/);
  });

  it('answers a guide that does not exist with the 404 problem', async () => {
    const res = await api
      .get(`${GUIDES_PATH}/no-such-guide`)
      .expect(404)
      .expect('Content-Type', /problem\+json/);
    assert.equal(res.body.code, 'not_found');
  });

  it('links the guides from each reference page, in a bar above Scalar', async () => {
    for (const path of Object.values(DOCS_PATHS)) {
      const res = await api.get(path).expect(200);
      assert.match(res.text, new RegExp(`<header class="docs-bar">\\s*<a href="${GUIDES_PATH}/">Guides</a>`));
      assert.match(res.text, new RegExp(`<link rel="stylesheet" href="${GUIDES_PATH}/guides.css" />`));
    }
  });
});
