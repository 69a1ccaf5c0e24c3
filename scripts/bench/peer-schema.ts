// The naive peer's tables (scripts/bench/peer.ts), in the schema `peer` of a PostgreSQL database: what a plain service
// would declare for the same writes (keys, tasks, cards, reviews, with their foreign keys and the one index each read
// needs), filled with a copy of the service's students, tasks and cards so that both write into tables of the same
// size, and a key row for each credential the bench's requests carry. Made while no server runs.
//
// On PostgreSQL the schema lives in the bench's own database and is copied from the service's tables in SQL. An
// embedded run has no PostgreSQL of its own: with BENCH_PEER_DATABASE_URL it makes the peer a throwaway database on
// that server and copies the embedded database's rows into it (peerRowsOf), so the rule for the embedded
// writes (within twice their PostgreSQL ratio to the peer) is measured against the peer's cost in the same rounds.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db } from '../../db/connect.ts';

/** The peer's backends' application_name, by which the bench tells their CPU from the service's. */
export const PEER_APPLICATION_NAME = 'bench-peer';

const TABLES = `
  create schema peer;
  create table peer.students (id uuid primary key);
  create table peer.keys (hash text primary key, student_id uuid not null references peer.students (id));
  create table peer.tasks (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references peer.students (id),
    title text not null,
    course text,
    due_at timestamptz not null,
    status text not null default 'open',
    priority text not null default 'normal',
    created_at timestamptz not null default now()
  );
  create index on peer.tasks (user_id, due_at, id);
  create table peer.cards (
    id uuid primary key,
    user_id uuid not null references peer.students (id),
    ease double precision not null,
    repetitions integer not null,
    interval_days integer not null,
    next_due_at timestamptz not null,
    last_reviewed_at timestamptz
  );
  create table peer.reviews (
    id uuid primary key default gen_random_uuid(),
    card_id uuid not null references peer.cards (id),
    user_id uuid not null references peer.students (id),
    grade smallint not null,
    reviewed_at timestamptz not null,
    ease double precision not null,
    repetitions integer not null,
    interval_days integer not null,
    next_due_at timestamptz not null
  );
  create index on peer.reviews (card_id);
  create index on peer.reviews (user_id, reviewed_at);
`;

const TASK_COLUMNS = ['id', 'user_id', 'title', 'course', 'due_at', 'status', 'priority', 'created_at'] as const;
const CARD_COLUMNS = [
  'id',
  'user_id',
  'ease',
  'repetitions',
  'interval_days',
  'next_due_at',
  'last_reviewed_at',
] as const;

/** The service's rows the peer's tables start with, read from another database (peerRowsOf). */
export interface PeerRows {
  students: string[];
  tasks: Array<Record<(typeof TASK_COLUMNS)[number], unknown>>;
  cards: Array<Record<(typeof CARD_COLUMNS)[number], unknown>>;
}

/** The service's students, tasks and cards as the peer's tables hold them, for a peer in another database. */
export async function peerRowsOf(db: Db): Promise<PeerRows> {
  const [students, tasks, cards] = await Promise.all([
    db.selectFrom('users').select('id').execute(),
    db.selectFrom('tasks').select(TASK_COLUMNS).execute(),
    db.selectFrom('flashcard_cards').select(CARD_COLUMNS).execute(),
  ]);
  return { students: students.map((student) => student.id), tasks, cards };
}

/**
 * The peer's schema on `databaseUrl`, with a key for each student's bearer token, filled from `rows` (read from the
 * service's database elsewhere) or, without them, from the service's tables in the same database.
 */
export async function createPeerSchema(
  databaseUrl: string,
  tokens: Array<{ token: string; studentId: string }>,
  rows?: PeerRows,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(TABLES);
    if (rows) {
      // Each table's rows as one JSON value: one statement per table whatever their number.
      await client.query('insert into peer.students (id) select unnest($1::uuid[])', [rows.students]);
      const copy = (table: string, columns: readonly string[]) =>
        `insert into peer.${table} (${columns}) select ${columns} from jsonb_populate_recordset(null::peer.${table}, $1)`;
      await client.query(copy('tasks', TASK_COLUMNS), [JSON.stringify(rows.tasks)]);
      await client.query(copy('cards', CARD_COLUMNS), [JSON.stringify(rows.cards)]);
    } else {
      await client.query(`
        insert into peer.students (id) select id from users;
        insert into peer.tasks (${TASK_COLUMNS}) select ${TASK_COLUMNS} from tasks;
        insert into peer.cards (${CARD_COLUMNS}) select ${CARD_COLUMNS} from flashcard_cards;
      `);
    }
    await client.query('analyze peer.students, peer.tasks, peer.cards, peer.reviews');
    await client.query('insert into peer.keys (hash, student_id) select * from unnest($1::text[], $2::uuid[])', [
      tokens.map(({ token }) => createHash('sha256').update(token).digest('hex')),
      tokens.map(({ studentId }) => studentId),
    ]);
    await client.query('commit');
  } finally {
    await client.end();
  }
}
