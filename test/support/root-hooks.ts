// Root hooks for the whole run: one seeded test database (see test-db.ts), the loaded contracts, and at the
// end the coverage check — every operation of every spec must have been exercised by some test.
import { readdirSync } from 'node:fs';
import type { Context } from 'mocha';
import { loadContracts, exercised } from './contract.ts';
import { createTestDatabase, type TestDatabase } from './test-db.ts';

let database: TestDatabase | undefined;

/** The run's shared, seeded database. Tests that write use their own rows (their own keys, for example). */
export function testDatabase(): TestDatabase {
  if (!database) throw new Error('the test database is created by the root beforeAll hook');
  return database;
}

export const mochaHooks = {
  async beforeAll(this: Context) {
    this.timeout(180_000);
    await loadContracts();
    database = await createTestDatabase();
    console.log(`    (tests run on ${database.description}${process.env.REDIS_URL ? ', Redis at ' + new URL(process.env.REDIS_URL).host : ''})`);
  },
  async afterAll(this: Context) {
    await database?.close();
    if (process.env.CONTRACT_COVERAGE === 'off' || !ranEverySurfaceSuite(this)) return;
    const missing = (await loadContracts())
      .flatMap((c) => c.api.router.getOperations().map((op) => op.operationId!))
      .filter((id) => !exercised.has(id));
    if (missing.length > 0) {
      throw new Error(`These operations of the spec were never exercised by a test: ${missing.join(', ')}`);
    }
  },
};

/** The coverage check only means something when every surface's test files ran in full (no file subset, no grep). */
function ranEverySurfaceSuite(context: Context): boolean {
  if (process.argv.some((arg) => /^(-g|-f|--grep|--fgrep)(=|$)/.test(arg))) return false;
  const loaded = new Set(context.test?.parent?.suites.map((s) => s.file) ?? []);
  const expected = ['partner-v1', 'general'].flatMap((surface) =>
    readdirSync(new URL(`../${surface}/`, import.meta.url)).filter((f) => f.endsWith('.test.ts')).map((f) => new URL(`../${surface}/${f}`, import.meta.url).pathname),
  );
  return expected.every((file) => loaded.has(file));
}
