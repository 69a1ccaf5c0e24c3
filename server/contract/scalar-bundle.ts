// Where the rendered reference's renderer lives: Scalar's prebuilt browser bundle, kept in the repository under
// docs/vendor/ (scripts/vendor-scalar.ts says why and replaces it) with a record of the release it came from.
import { join } from 'node:path';
import { docsDirectory } from './docs-directory.ts';

export const SCALAR_PACKAGE = '@scalar/api-reference';

const VENDOR_DIR = join(docsDirectory(), 'vendor', 'scalar-api-reference');
export const SCALAR_SCRIPT = join(VENDOR_DIR, 'standalone.js');
/** The release the bundle came from: package, version, license, the tarball's integrity and the file's sha256. */
export const SCALAR_SOURCE = join(VENDOR_DIR, 'source.json');
