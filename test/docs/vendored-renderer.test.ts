// The rendered reference's renderer is Scalar's browser bundle kept in docs/vendor/ (scripts/vendor-scalar.ts): the
// file must be the one its record names, byte for byte, so a hand edit or a half-copied update fails here.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SCALAR_PACKAGE, SCALAR_SCRIPT, SCALAR_SOURCE } from '../../server/contract/scalar-bundle.ts';

describe('the vendored reference renderer', () => {
  const source = JSON.parse(readFileSync(SCALAR_SOURCE, 'utf8')) as {
    package: string;
    version: string;
    license: string;
    sha256: string;
  };

  it('is the bundle of the release its record names, unchanged', () => {
    assert.equal(source.package, SCALAR_PACKAGE);
    assert.match(source.version, /^\d+\.\d+\.\d+$/);
    assert.equal(source.license, 'MIT');
    assert.equal(createHash('sha256').update(readFileSync(SCALAR_SCRIPT)).digest('hex'), source.sha256);
  });

  it('is no longer an installed package (its Node-22-only dependencies would warn on every npm ci)', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: object;
      devDependencies: object;
    };
    assert.ok(!(SCALAR_PACKAGE in manifest.dependencies) && !(SCALAR_PACKAGE in manifest.devDependencies));
  });
});
