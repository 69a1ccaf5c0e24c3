// The naive peer's tables (scripts/bench/peer.ts), in the schema `peer` of the bench's PostgreSQL database: what a
// plain service would declare for the same writes (keys, tasks, cards, reviews, with their foreign keys and the
// one index each read needs), filled with a copy of the service's tasks and cards so that both write into tables of
// the same size, and a key row for each credential the bench's requests carry. Made while no server runs.
import { createHash } from 'node:crypto';
import pg from 'pg';

/** The peer's backends' application_name, by which the bench tells their CPU from the service's. */
export const PEER_APPLICATION_NAME = 'bench-peer';

const SCHEMA = `
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
  insert into peer.students (id) select id from users;
  insert into peer.tasks (id, user_id, title, course, due_at, status, priority, created_at)
    select id, user_id, title, course, due_at, status, priority, created_at from tasks;
  insert into peer.cards (id, user_id, ease, repetitions, interval_days, next_due_at, last_reviewed_at)
    select id, user_id, ease, repetitions, interval_days, next_due_at, last_reviewed_at from flashcard_cards;
  analyze peer.students, peer.tasks, peer.cards, peer.reviews;
`;

/** The peer's schema on `databaseUrl`, with a key for each student's bearer token. */
export async function createPeerSchema(
  databaseUrl: string,
  tokens: Array<{ token: string; studentId: string }>,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(SCHEMA);
    await client.query('insert into peer.keys (hash, student_id) select * from unnest($1::text[], $2::uuid[])', [
      tokens.map(({ token }) => createHash('sha256').update(token).digest('hex')),
      tokens.map(({ studentId }) => studentId),
    ]);
    await client.query('commit');
  } finally {
    await client.end();
  }
}
