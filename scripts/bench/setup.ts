// The database a bench run serves from, and the credentials its requests carry. Embedded PGlite in a fresh
// temporary DATA_DIR by default (what `npm start` makes); with DATABASE_URL a throwaway database on that server
// (created here, dropped on close, so nobody's data is touched). The server itself runs as its own process
// (scripts/bench.ts); this module only writes into the database while no server holds it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportPKCS8, generateKeyPair } from 'jose';
import pg from 'pg';
import { createClient } from 'redis';
import { connect, type Db, type DbTarget } from '../../db/connect.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { insertGrant } from '../../db/queries/oauth.ts';
import { findCredentials } from '../../db/queries/profile.ts';
import { setContractPlan } from '../../db/queries/users.ts';
import { DEMO_SEED, isEmpty, seedDemo, seedReference } from '../../db/seed/index.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { accessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { loadSigningKey, SIGNING_ALGORITHM } from '../../server/auth/signing-keys.ts';
import { createDemoStudent, DEMO_STUDENT } from '../../app/demo-student.ts';
import { secretsKeyFor } from '../../app/secrets-key.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { registerClient } from '../../server/oauth/clients.ts';
import { createPeerSchema, PEER_APPLICATION_NAME, peerRowsOf } from './peer-schema.ts';
import { createSyncStudent } from './sync-student.ts';

/** Far above any request count a bench reaches, and within the integer columns (max 2,147,483,647). */
const HUGE_LIMIT = 1_000_000_000;
/** The issuer the bench's server is configured with (PUBLIC_URL) and its tokens name. */
export const BENCH_PUBLIC_URL = 'http://127.0.0.1';

export interface BenchDatabase {
  engine: 'pglite' | 'postgresql';
  target: DbTarget;
  /** The variables that point the server at it (DATA_DIR or DATABASE_URL). */
  env: Record<string, string>;
  /** The throwaway database's name on PostgreSQL, for finding its backends. */
  postgresName: string | undefined;
  drop(): Promise<void>;
}

export async function createBenchDatabase(databaseUrl: string | undefined): Promise<BenchDatabase> {
  if (databaseUrl) {
    const throwaway = await createThrowawayDatabase(databaseUrl, 'bench');
    return {
      engine: 'postgresql',
      target: { databaseUrl: throwaway.url },
      env: { DATABASE_URL: throwaway.url },
      postgresName: new URL(throwaway.url).pathname.slice(1),
      drop: throwaway.drop,
    };
  }
  const parent = mkdtempSync(join(tmpdir(), 'bench-'));
  const dataDir = join(parent, 'data');
  return {
    engine: 'pglite',
    target: { dataDir },
    env: { DATA_DIR: dataDir },
    postgresName: undefined,
    drop: async () => rmSync(parent, { recursive: true, force: true }),
  };
}

/** Where the naive peer (scripts/bench/peer.ts) keeps its tables: always a PostgreSQL database. */
export interface PeerDatabase {
  url: string;
  /** The server it is on and its name there, for finding the peer's backends (postgresBackends). */
  serverUrl: string;
  name: string;
}

/**
 * The naive peer's database on the PostgreSQL server `serverUrl`, its schema made and filled
 * (scripts/bench/peer-schema.ts). On PostgreSQL it is the bench's own database. An embedded run has none of its own:
 * the peer gets a throwaway database on that server (BENCH_PEER_DATABASE_URL), its drop handed to `onDrop`, holding a
 * copy of the embedded database's students, tasks and cards.
 */
export async function createPeerDatabase(
  database: BenchDatabase,
  serverUrl: string,
  tokens: Array<{ token: string; studentId: string }>,
  onDrop: (drop: () => Promise<void>) => void,
): Promise<PeerDatabase> {
  if (database.postgresName) {
    const url = database.env.DATABASE_URL!;
    await createPeerSchema(url, tokens);
    return { url, serverUrl, name: database.postgresName };
  }
  const throwaway = await createThrowawayDatabase(serverUrl, 'bench');
  onDrop(throwaway.drop);
  const db = connect(database.target);
  try {
    await createPeerSchema(throwaway.url, tokens, await peerRowsOf(db));
  } finally {
    await db.destroy();
  }
  return { url: throwaway.url, serverUrl, name: new URL(throwaway.url).pathname.slice(1) };
}

export interface Credentials {
  apiKey: string;
  /** An access token of the demo student (15 minutes: longer than a full bench run). */
  studentToken: string;
  studentId: string;
  /** One of the demo student's cards, for the review scenario. */
  cardId: string;
  /** Other students, one for each connection of the many-students scenarios. */
  students: BenchStudent[];
  /** The large account whose full sync sync-pull-page pages through (scripts/bench/sync-student.ts). */
  syncStudentToken: string;
  /** The `sync_token` of each page of that full sync, in order. */
  syncPageTokens: string[];
}

/** One of the bench's generated students, as a connection of a many-students scenario acts for it. */
export interface BenchStudent {
  studentId: string;
  token: string;
  /** Its own cards (a generated student with a deck has five), which its connection reviews in turn. */
  cardIds: string[];
}

/** JWT_PRIVATE_KEY for the bench's server: the bench signs its student's token with the same key. */
export async function newJwtPrivateKey(): Promise<string> {
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  return exportPKCS8(privateKey);
}

/**
 * Everything the requests need, written while no server runs: migrations, reference and demo data (done already by
 * the server's own first start on PGlite, and then no-ops), a partner key and the demo student on a contract plan
 * whose limits the bench never reaches, and a grant with an access token as the token endpoint would issue it.
 */
export async function prepareCredentials(
  database: BenchDatabase,
  jwtPrivateKey: string,
  secretsKey: string | undefined,
  students: number,
): Promise<Credentials> {
  const db = connect(database.target);
  try {
    await migrateToLatest(db);
    const now = new Date();
    if (await isEmpty(db)) await seedReference(db, { now });
    await seedDemo(db, { seed: DEMO_SEED, now });
    if (!(await findCredentials(db, DEMO_STUDENT.email))) {
      // Sealed with the server's key (SECRETS_KEY, or the key file of its data directory), which opens them.
      const secrets = secretBox(
        secretsKeyFor({
          database: database.target,
          secretsKey: secretsKey ? Buffer.from(secretsKey, 'base64') : undefined,
        }),
      );
      await createDemoStudent(db, now, secrets);
    }
    const studentId = (await setContractPlan(db, DEMO_STUDENT.email, {
      per_minute: HUGE_LIMIT,
      per_day: HUGE_LIMIT,
      ai_per_hour: HUGE_LIMIT,
    }))!;
    const { key: apiKey } = await issueApiKey(db, { name: 'bench', per_minute: HUGE_LIMIT, per_day: HUGE_LIMIT });
    const { client_id } = await registerClient(db, {
      name: 'bench',
      redirect_uris: ['http://127.0.0.1/callback'],
      scopes: [...ALL_SCOPES],
      confidential: false,
    });
    const grantId = await insertGrant(db, { client_id, user_id: studentId, scopes: [...ALL_SCOPES] });

    const tokens = accessTokenIssuer(await loadSigningKey(jwtPrivateKey), {
      issuer: BENCH_PUBLIC_URL,
      now: () => new Date(),
    });
    const { token: studentToken } = await tokens.issue({
      user_id: studentId,
      client_id,
      scopes: ALL_SCOPES,
      grant_id: grantId,
    });
    const card = await db
      .selectFrom('flashcard_cards')
      .select('id')
      .where('user_id', '=', studentId)
      .orderBy('id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const others = await studentsWithCards(db, studentId, students);
    await db
      .updateTable('users')
      .set({
        plan: 'contract',
        contract_per_minute: HUGE_LIMIT,
        contract_per_day: HUGE_LIMIT,
        contract_ai_per_hour: HUGE_LIMIT,
      })
      .where('id', 'in', others.length > 0 ? others.map((o) => o.user_id) : [studentId])
      .execute();
    const issued = await Promise.all(
      others.map(async ({ user_id, card_ids }) => {
        const grant_id = await insertGrant(db, { client_id, user_id, scopes: [...ALL_SCOPES] });
        const { token } = await tokens.issue({ user_id, client_id, scopes: ALL_SCOPES, grant_id });
        return { studentId: user_id, token, cardIds: card_ids };
      }),
    );
    const sync = await createSyncStudent(db, now);
    await setContractPlan(db, sync.email, { per_minute: HUGE_LIMIT, per_day: HUGE_LIMIT, ai_per_hour: HUGE_LIMIT });
    const syncGrant = await insertGrant(db, { client_id, user_id: sync.userId, scopes: [...ALL_SCOPES] });
    const { token: syncStudentToken } = await tokens.issue({
      user_id: sync.userId,
      client_id,
      scopes: ALL_SCOPES,
      grant_id: syncGrant,
    });
    return {
      apiKey,
      studentToken,
      studentId,
      cardId: card.id,
      students: issued,
      syncStudentToken,
      syncPageTokens: sync.pageTokens,
    };
  } finally {
    await db.destroy();
  }
}

/**
 * `count` students other than the demo one that own cards (the generated ones: every fourth has a deck), or an error
 * when the database has fewer: a many-students scenario needs a student for each connection.
 */
async function studentsWithCards(db: Db, except: string, count: number) {
  if (count === 0) return [];
  const rows = await db
    .selectFrom('flashcard_cards')
    .select(['user_id', (eb) => eb.fn.agg<string[]>('array_agg', ['id']).as('card_ids')])
    .where('user_id', '<>', except)
    .groupBy('user_id')
    .orderBy('user_id')
    .limit(count)
    .execute();
  if (rows.length < count) {
    throw new Error(`the bench needs ${count} students with cards and the database has ${rows.length}`);
  }
  return rows;
}

/** The bench's day-window counters would otherwise linger in Redis for 24 hours. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    await client.close();
  }
}

/**
 * Autovacuum's work on the bench's database, where the server runs without autovacuum (a CI server's setting): VACUUM
 * ANALYZE after each scenario's warm-up. Without the VACUUM, one student reviewing one card thousands of times a
 * second leaves thousands of dead versions of the card's and the student's rows, which autovacuum would clear within
 * its minute, and every later scenario would read through them. Without the ANALYZE, the statistics stay those of the
 * tables before the scenario, when the reviews, tasks and events it writes were a page or none: each named
 * statement's plan is made once for that size (a sequential scan is the cheapest read of one page) and then reads
 * every row the scenario has added, on every request. On a running service autovacuum analyzes a table once a tenth
 * of it has changed, which replaces those plans within its minute; the scenario's ~2 s warm-up grows the tables it
 * writes to a thousand rows or so, and the analyze after it stands for that. Returns whether it ran (autovacuum
 * off); the report says so.
 */
export async function maintainWithoutAutovacuum(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ autovacuum: string }>('show autovacuum');
    if (rows[0]?.autovacuum === 'on') return false;
    await client.query('vacuum analyze');
    return true;
  } finally {
    await client.end();
  }
}

/** The pids of a database's PostgreSQL backends (the server runs on this machine, so /proc can read their CPU). */
export function postgresBackends(
  serverUrl: string,
  databaseName: string,
): { pids(whose: 'service' | 'peer'): Promise<number[]>; close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: serverUrl, max: 1 });
  return {
    /** The service's backends, or the naive peer's (scripts/bench/peer.ts), told apart by their application_name. */
    async pids(whose) {
      const { rows } = await pool.query<{ pid: number }>(
        `select pid from pg_stat_activity
         where datname = $1 and pid <> pg_backend_pid() and (application_name is not distinct from $2) = $3`,
        [databaseName, PEER_APPLICATION_NAME, whose === 'peer'],
      );
      return rows.map((row) => row.pid);
    },
    close: () => pool.end(),
  };
}
