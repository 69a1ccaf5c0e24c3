// Migrations and reference data, by one process at a time (a PostgreSQL advisory lock), then demo data on the
// embedded database.
import { type Db } from '../../db/connect.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { findCredentials } from '../../db/queries/profile.ts';
import { DEMO_SEED, isEmpty, seedDemo, seedReference } from '../../db/seed/index.ts';
import { whileHoldingStartupLock } from '../../db/startup-lock.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { signingKeysFor } from '../../server/auth/signing-key-store.ts';
import { createDemoStudent, DEMO_STUDENT, FIRST_START_KEY_NAME, type DemoCredentials } from '../demo-student.ts';
import { secretsKeyFor } from '../secrets-key.ts';
import type { ProcessContext } from './context.ts';

/** Returns the demo credentials when it made them (shown once, in the banner). */
export async function prepareDatabase(context: ProcessContext, db: Db): Promise<DemoCredentials | undefined> {
  const { config, logger, embedded, progress } = context;
  const now = new Date();
  await whileHoldingStartupLock(db, config.database, config.databaseTimeouts, async (locked) => {
    const applied = await migrateToLatest(locked, (name, index, pending) =>
      progress(`applying migration ${index}/${pending} (${name})`),
    );
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrated');
    // Reference data is loaded on the first start only. Later releases' reference data arrives with `npm run cli --
    // seed`.
    if (await isEmpty(locked)) {
      progress('loading reference data (universities, holidays)');
      await seedReference(locked, { now });
    }
    // The first stored signing key (PostgreSQL) is made here, once, rather than by processes racing each other: each
    // would make its own and refuse the other's tokens until it re-reads the set (at most every 5 s on an unknown
    // kid). A start that takes a second or less reaches its first request well inside that time.
    if (!embedded) (await signingKeysFor(config, locked, () => {})).stop();
  });
  // Demo data goes into an embedded database that has no users yet; the demo keys and the demo student follow
  // whenever the demo student is missing, so a first start interrupted at any step completes on the next one.
  if (!embedded) return undefined;
  if (context.firstStart) progress('seeding demo data');
  await seedDemo(db, { seed: DEMO_SEED, now });
  if (await findCredentials(db, DEMO_STUDENT.email)) return undefined;
  return {
    partnerKey: (await issueApiKey(db, { name: FIRST_START_KEY_NAME })).key,
    student: await createDemoStudent(db, now, secretBox(secretsKeyFor(config))),
  };
}
