// How the spec-driven tests (test/contract/property/, test/server/documented-statuses.test.ts) get, for each surface of
// server/contract/surfaces.ts, an app and valid credentials. They iterate over the surfaces, so a new surface needs one
// entry here; a test fails for any surface without one.
import { setPlan } from '../../db/queries/users.ts';
import { sql } from 'kysely';
import type { Surface } from '../../server/contract/surfaces.ts';
import type { Db } from '../../db/connect.ts';
import { newStudent } from './general-app.ts';
import { buildApp, issueTestKey } from './partner-app.ts';
import { testDatabase } from './shared-database.ts';

type App = Awaited<ReturnType<typeof buildApp>>;

export interface Client {
  app: App;
  /** Headers that authenticate a request. */
  credentials: Record<string, string>;
}

export interface SurfaceUnderTest {
  /**
   * Credentials allowed `perMinute` requests a minute (and plenty a day), on a fresh app; with `db`, an app on that
   * database (the credentials are made on the shared test database).
   */
  client(perMinute: number, db?: Db): Promise<Client>;
  /**
   * For operations without security, limited per client address rather than per credential: a client whose next
   * request is not refused by those limits. Absent when the surface has no such operation.
   */
  anonymous?(db?: Db): Promise<Client>;
}

/** Room for long property runs without a 429. */
export const ROOMY = 1_000_000;

export const surfacesUnderTest: Partial<Record<Surface, SurfaceUnderTest>> = {
  'partner-v1': {
    async client(perMinute, db) {
      const { key } = await issueTestKey({ per_minute: perMinute, per_day: ROOMY });
      return { app: await buildApp(db ? { db } : {}), credentials: { 'X-Service-API-Key': key } };
    },
  },
  general: {
    async client(perMinute, db) {
      const app = await buildApp();
      const student = await newStudent(app);
      await onContractPlan(testDatabase().db, student.id, perMinute);
      // A password typed more than 5 minutes ago cannot delete the account (deleteMyAccount answers 403), so no
      // generated request ends the student every operation's requests share.
      // test/surfaces/general/account-lifecycle.test.ts deletes for real.
      await testDatabase()
        .db.updateTable('oauth_grants')
        .set({ authenticated_at: sql`now() - interval '6 minutes'` })
        .where('user_id', '=', student.id)
        .execute();
      return { app: db ? await buildApp({ db }) : app, credentials: student.headers };
    },
    // Account creation allows 10 an hour per address; every test request comes from 127.0.0.1, so each gets a fresh
    // app (fresh counters, ~10 ms).
    anonymous: async (db) => ({ app: await buildApp(db ? { db } : {}), credentials: {} }),
  },
};

/** A contractual plan carries its own limits, so a test can set them. */
async function onContractPlan(db: Db, userId: string, perMinute: number): Promise<void> {
  await setPlan(
    db,
    userId,
    { plan: 'contract', contract_per_minute: perMinute, contract_per_day: ROOMY, contract_ai_per_hour: ROOMY },
    new Date(),
  );
}
