// The table of problem codes is the one list: every code the source builds a problem with is in it, every entry is
// used, and the spec's Problem schema documents the same codes with the same statuses (docs/errors.md is generated
// from the table; generated-pages.test.ts checks it is current).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { PROBLEM_CODES } from '../../server/http/problem-codes.ts';
import { Problem, problems } from '../../server/http/problems.ts';

const root = new URL('../../', import.meta.url).pathname;
const SOURCE_DIRS = ['app', 'server', 'services', 'handlers', 'db', 'domain', 'scripts'];
const TABLE = 'server/http/problem-codes.ts';

describe('the table of problem codes', () => {
  const sources = SOURCE_DIRS.flatMap((dir) => tsFiles(join(root, dir))).map((file) => ({
    file: relative(root, file),
    text: readFileSync(file, 'utf8'),
  }));

  it('builds every problem in server/http/problems.ts, so each takes its status and title from the table', () => {
    const elsewhere = sources
      .filter(({ file, text }) => file !== 'server/http/problems.ts' && /new Problem\(/.test(text))
      .map(({ file }) => file);
    assert.deepEqual(elsewhere, []);
    const problem = problems.conflict('A duplicate.');
    assert.deepEqual([problem.status, problem.title], [PROBLEM_CODES.conflict.status, PROBLEM_CODES.conflict.title]);
    assert.ok(problem instanceof Problem);
  });

  it('has every code the source builds a problem, a refusal or a refused webhook URL with', () => {
    const classes = ['Problem', 'UndeliverableUrlError', 'NotAllowedError', 'ConflictError', 'GoneError', 'LimitError'];
    const builders = new RegExp(`new (?:${classes.join('|')})\\(\\s*'([a-z_]+)'`, 'g');
    const used = new Set(sources.flatMap(({ text }) => [...text.matchAll(builders)].map((m) => m[1]!)));
    assert.ok(used.size >= 20, `found only ${used.size} codes in the source: has the way problems are built changed?`);
    assert.deepEqual(
      [...used].filter((code) => !(code in PROBLEM_CODES)),
      [],
    );
  });

  it('has no code that nothing answers with', () => {
    const source = sources
      .filter(({ file }) => file !== TABLE)
      .map(({ text }) => text)
      .join('\n');
    assert.deepEqual(
      Object.keys(PROBLEM_CODES).filter((code) => !source.includes(`'${code}'`)),
      [],
    );
  });

  it("agrees with the codes and statuses the spec's Problem schema documents", () => {
    for (const spec of bundledSpecs()) {
      const description: string = (spec.definition as any).components.schemas.Problem.properties.code.description;
      const documented = new Map<string, number>();
      let pending: string[] = [];
      // `a`, `b` (400, why): each status names the codes written before it.
      for (const [, status, code] of description.matchAll(/\((\d{3})[^)]*\)|`([a-z_]+)`/g)) {
        if (code) pending.push(code);
        else {
          for (const c of pending) documented.set(c, Number(status));
          pending = [];
        }
      }
      const table = new Map(Object.entries(PROBLEM_CODES).map(([code, { status }]) => [code, status]));
      assert.deepEqual(
        [...documented].sort(),
        [...table].sort(),
        `${spec.surface}: Problem.code's description against ${TABLE}`,
      );
    }
  });
});

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}
