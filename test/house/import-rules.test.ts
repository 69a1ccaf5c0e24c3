// The import-rules check (npm run check:imports, a CI step) has to fail on a break, not only pass on a tidy tree. It
// runs here, by its own command line from package.json, in a miniature of the repository in a temporary folder (the
// layer folders, the rules file, tsconfig.json, the packages): a tidy miniature passes, and the same one with one break
// planted per rule exits non-zero with exactly the planted breaks, each under its rule. The real source folders are not
// touched. package.json comes along: the entry files the rules protect are the ones its scripts run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const [command, ...args] = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['check:imports'] as string
).split(' ');

/** Each planted file and what it imports: a path of the miniature, `type:` before it for `import type`, or a package. */
type Tree = Record<string, string[]>;

// Every layer importing only downward; packages and node: modules are free everywhere.
const tidy: Tree = {
  'generated/general/types.ts': [],
  'domain/week.ts': ['type:generated/general/types.ts', 'luxon', 'node:crypto'],
  'db/queries.ts': ['domain/week.ts', 'kysely'],
  'server/http/problems.ts': ['db/queries.ts', 'domain/week.ts'],
  'server/auth/principal.ts': ['server/http/problems.ts', 'type:generated/general/types.ts'],
  'services/events.ts': ['server/auth/principal.ts', 'db/queries.ts'],
  'services/streams/live.ts': ['db/queries.ts'],
  'services/exams/preparation.ts': ['db/queries.ts'],
  'services/rooms/members.ts': ['services/streams/live.ts', 'db/queries.ts'],
  'services/tasks/writes.ts': ['services/streams/live.ts', 'services/rooms/members.ts'],
  'handlers/general/tasks.ts': ['services/events.ts', 'server/http/problems.ts', 'handlers/general/task-body.ts'],
  'handlers/general/task-body.ts': ['domain/week.ts'],
  'handlers/partner-v1/users.ts': ['services/events.ts', 'db/queries.ts'],
  'app/app.ts': ['handlers/general/tasks.ts', 'handlers/partner-v1/users.ts', 'services/events.ts'],
  'app/main.ts': ['app/app.ts'],
  'scripts/cli.ts': ['app/cli/accounts.ts'],
  'app/cli/accounts.ts': ['services/events.ts', 'db/queries.ts'],
  'scripts/bench/peer.ts': ['db/queries.ts'],
  'sdk/index.ts': ['type:generated/general/types.ts', 'openapi-fetch'],
  'test/support/fixtures.ts': [],
};

const FOLDER_LOOP = 'service-folders-no-loop';
// One break per rule, as [rule, importing file, imported file]; the circle's second edge is planted below.
const breaks: [string, string, string][] = [
  ['domain-imports-only-domain', 'domain/upward.ts', 'server/auth/principal.ts'],
  ['db-imports-only-db-and-domain', 'db/upward.ts', 'services/events.ts'],
  ['platform-imports-only-platform-db-domain', 'server/limits/upward.ts', 'type:services/events.ts'],
  ['services-not-to-handlers-or-entry', 'services/upward.ts', 'handlers/general/tasks.ts'],
  ['services-and-domain-not-to-problems', 'services/flashcards/card-body.ts', 'server/http/problems.ts'],
  ['handlers-not-to-entry', 'handlers/general/upward.ts', 'app/app.ts'],
  ['surfaces-apart', 'handlers/partner-v1/across.ts', 'handlers/general/tasks.ts'],
  ['cli-calls-services-not-handlers', 'app/cli/upward.ts', 'handlers/general/tasks.ts'],
  ['sdk-imports-only-sdk', 'sdk/upward.ts', 'server/http/problems.ts'],
  ['not-to-test', 'db/fixture-user.ts', 'test/support/fixtures.ts'],
  ['every-import-resolves', 'domain/unresolved.ts', 'domain/missing.ts'],
  ['no-circular', 'domain/loop-a.ts', 'domain/loop-b.ts'],
  ['entry-points-apart', 'app/main.ts', 'scripts/bench/peer.ts'],
  ['entry-files-not-imported', 'scripts/bench/runner.ts', 'scripts/cli.ts'],
  ['shared-services-not-to-features', 'services/streams/upward.ts', 'services/exams/preparation.ts'],
  // A loop between folders, not files: rooms/members.ts ← tasks/writes.ts, and now rooms/nearby.ts → tasks/writes.ts.
  [FOLDER_LOOP, 'services/rooms/nearby.ts', 'services/tasks/writes.ts'],
];
const broken: Tree = { ...tidy, 'domain/loop-b.ts': ['type:domain/loop-a.ts'] };
for (const [, from, to] of breaks) broken[from] = [...(broken[from] ?? []), to];

/** What the check reports for the planted breaks, as `rule: from → to`: a loop between folders from each side. */
const expected = breaks.flatMap(([rule, from, to]) => {
  if (rule === FOLDER_LOOP)
    return [`${rule}: ${dirname(from)} → ${dirname(to)}`, `${rule}: ${dirname(to)} → ${dirname(from)}`];
  return [`${rule}: ${from} → ${rule === 'every-import-resolves' ? './missing.ts' : to.replace(/^type:/, '')}`];
});

describe('import rules (npm run check:imports)', () => {
  const folders: string[] = [];
  after(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

  /** The check's own command line, run in a fresh miniature of `tree`; `extra` arguments come after it. */
  function check(tree: Tree, ...extra: string[]) {
    const folder = mkdtempSync(join(tmpdir(), 'import-rules-'));
    folders.push(folder);
    for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json'])
      copyFileSync(join(root, file), join(folder, file));
    symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'));
    for (const [file, imports] of Object.entries(tree)) {
      mkdirSync(join(folder, dirname(file)), { recursive: true });
      writeFileSync(
        join(folder, file),
        imports.map((target, i) => importLine(file, target, i)).join('') + 'export const planted = 1;\n',
      );
    }
    return spawnSync(join(root, 'node_modules/.bin', command!), [...args, ...extra], { cwd: folder, encoding: 'utf8' });
  }

  it('passes a tree whose layers import downward only', () => {
    const run = check(tidy);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /no dependency violations found/);
  });

  it('fails on each planted break and reports it, with the why, under its rule', () => {
    const run = check(broken);
    assert.notEqual(run.status, 0, run.stdout + run.stderr);
    for (const report of expected) assert.match(run.stdout, new RegExp(`error ${report.replace(/ → .*/, ' → ')}`));
    assert.match(
      run.stdout,
      /handlers\/general\/ and handlers\/partner-v1\/ never import each other/,
      'the rule comment says why',
    );
    assert.match(run.stdout, new RegExp(`x ${expected.length} dependency violations \\(${expected.length} errors`));
  });

  it('reports exactly the planted breaks: nothing in the tidy part, nothing twice', () => {
    const run = check(broken, '--output-type', 'json');
    const violations = JSON.parse(run.stdout).summary.violations as {
      rule: { name: string };
      from: string;
      to: string;
    }[];
    const reported = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    assert.deepEqual(reported, [...expected].sort());
  });
});

function importLine(file: string, target: string, i: number): string {
  const typeOnly = target.startsWith('type:');
  const path = target.replace(/^type:/, '');
  const relativePath = relative(dirname(file), path);
  const specifier = !path.endsWith('.ts') ? path : relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
  return `import ${typeOnly ? 'type ' : ''}* as m${i} from '${specifier}';\n`;
}
