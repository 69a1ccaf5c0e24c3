// Every locked package must run on every Node version the project declares (package.json `engines`): otherwise
// `npm ci` prints EBADENGINE (a newcomer's first command looks broken) and a version it promises may not run the
// package at all. npm checks only the Node that runs it; this checks the whole declared range, from the lockfile, so
// it fails before a release is installed anywhere. (The rendered reference's renderer is not a package for this
// reason: its bundle is kept in docs/vendor/, see scripts/vendor-scalar.ts.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import semver from 'semver';

interface LockedPackage {
  version?: string;
  engines?: Record<string, string> | string[];
}

const project = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockedPackage> };

/** The locked packages whose `engines.node` leaves out part of `declared`, as "name@version needs RANGE". */
export function packagesExcluding(declared: string, packages: Record<string, LockedPackage>): string[] {
  return Object.entries(packages).flatMap(([path, locked]) => {
    // A very old package.json may list engines as strings; npm ignores that form too.
    const needs = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
    if (path === '' || needs === undefined || semver.subset(declared, needs, { includePrerelease: false })) return [];
    return [`${path.replace(/^.*node_modules\//, '')}@${locked.version} needs node ${needs}`];
  });
}

describe('package engines', () => {
  it('every locked package supports every Node version package.json declares', () => {
    assert.deepEqual(
      packagesExcluding(project.engines.node, lock.packages),
      [],
      `package.json declares node ${project.engines.node}`,
    );
  });

  it('names each package whose engines leave out part of the declared range, nested ones included', () => {
    const packages: Record<string, LockedPackage> = {
      '': {},
      'node_modules/old': { version: '1.0.0', engines: { node: '>=18' } },
      'node_modules/@x/new': { version: '2.0.0', engines: { node: '>=22' } },
      'node_modules/bundle': { version: '1.0.0', engines: { node: '>=20' } },
      'node_modules/bundle/node_modules/inner': { version: '1.0.0', engines: { node: '>=22' } },
      'node_modules/strings': { version: '1.0.0', engines: ['node >=99'] },
    };
    assert.deepEqual(packagesExcluding('>=20.19', packages), [
      '@x/new@2.0.0 needs node >=22',
      'inner@1.0.0 needs node >=22',
    ]);
  });
});
