// Mocha loads root hooks with require() first, and tsx lets require() load a TypeScript ESM file as CommonJS:
// the hooks would then live in a second copy of root-hooks.ts, apart from the copy the tests import (a test
// database and contracts the tests never see). An .mjs file is always import()ed, so there is one copy.
export { mochaHooks } from './root-hooks.ts';
