// Every locked package must run on every Node version the project declares (package.json `engines`): otherwise
// `npm ci` prints EBADENGINE (a newcomer's first command looks broken) and a version it promises may not run the
// package at all. npm checks only the Node that runs it; this checks the whole declared range, from the lockfile, so
// it fails before a release is installed anywhere.
//
// One exception, declared here: what is installed only for @scalar/api-reference. The project serves that package's
// prebuilt browser bundle (dist/browser/standalone.js) and runs none of its Node code. Its releases that declare
// Node 20 (1.46.x and older) render every operation before showing any: the general reference took ~40 s to show its
// first operation where 1.72 took 0.5 s (same machine, same load), and the docs browser test failed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import semver from 'semver';

interface LockedPackage {
  version?: string;
  engines?: Record<string, string> | string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** Packages used only as a carrier of a browser bundle, whose Node code never runs. */
const BROWSER_ONLY = ['@scalar/api-reference'];

const project = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockedPackage> };

/**
 * The locked packages whose `engines.node` leaves out part of `declared`, as "name@version needs RANGE"; those that
 * only `browserOnly` packages bring in are left out.
 */
export function packagesExcluding(declared: string, packages: Record<string, LockedPackage>, browserOnly: string[] = []): string[] {
  const project = Object.keys(packages['']?.dependencies ?? {}).concat(Object.keys((packages[''] as { devDependencies?: object })?.devDependencies ?? {}));
  const used = installedFrom(packages, project.filter((name) => !browserOnly.includes(name)));
  const carried = installedFrom(packages, browserOnly);
  return Object.entries(packages).flatMap(([path, locked]) => {
    // A very old package.json may list engines as strings; npm ignores that form too.
    const needs = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
    if (path === '' || (carried.has(path) && !used.has(path))) return [];
    if (needs === undefined || semver.subset(declared, needs, { includePrerelease: false })) return [];
    return [`${path.replace(/^.*node_modules\//, '')}@${locked.version} needs node ${needs}`];
  });
}

/** The install paths of `names` (top-level dependencies) and of everything they bring in, as node_modules resolves. */
function installedFrom(packages: Record<string, LockedPackage>, names: string[]): Set<string> {
  const found = new Set<string>();
  const visit = (name: string, from: string) => {
    // The nearest node_modules/<name> from `from` upward, as Node's resolution finds it.
    for (let dir = from; ; dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : '') {
      const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (packages[path]) {
        if (found.has(path)) return;
        found.add(path);
        const locked = packages[path]!;
        for (const dependency of Object.keys({ ...locked.dependencies, ...locked.optionalDependencies })) visit(dependency, path);
        return;
      }
      if (dir === '') return;
    }
  };
  for (const name of names) visit(name, '');
  return found;
}

describe('package engines', () => {
  it('every locked package supports every Node version package.json declares', () => {
    assert.deepEqual(packagesExcluding(project.engines.node, lock.packages, BROWSER_ONLY), [], `package.json declares node ${project.engines.node}`);
  });

  it('names a package whose engines leave out part of the declared range, unless only a browser-only package brings it', () => {
    const packages: Record<string, LockedPackage> = {
      '': { dependencies: { old: '1.0.0', '@x/new': '2.0.0', bundle: '1.0.0', shared: '1.0.0' } },
      'node_modules/old': { version: '1.0.0', engines: { node: '>=18' } },
      'node_modules/@x/new': { version: '2.0.0', engines: { node: '>=22' } },
      'node_modules/bundle': { version: '1.0.0', engines: { node: '>=22' }, dependencies: { inner: '1.0.0', shared: '1.0.0' } },
      'node_modules/bundle/node_modules/inner': { version: '1.0.0', engines: { node: '>=22' } },
      'node_modules/shared': { version: '3.0.0', engines: { node: '>=22' } },
    };
    assert.deepEqual(packagesExcluding('>=20.19', packages), ['@x/new@2.0.0 needs node >=22', 'bundle@1.0.0 needs node >=22', 'inner@1.0.0 needs node >=22', 'shared@3.0.0 needs node >=22']);
    // shared is also the project's own dependency: it still counts.
    assert.deepEqual(packagesExcluding('>=20.19', packages, ['bundle']), ['@x/new@2.0.0 needs node >=22', 'shared@3.0.0 needs node >=22']);
  });
});
