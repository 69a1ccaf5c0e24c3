// Frozen in time: a migration never imports application code, so it runs the same forever. Study rooms become usable:
// the table partner v1 counts (study_rooms, from 20261122_0001) gains what the general surface shows (an optional
// course, the visibility, the revocable join code as its SHA-256 with a public prefix), a row per member (the owner is
// one too, added by a trigger on every insert), and a row per focus session of the room's shared timer. A session's
// state is computed from its stored instants (domain/focus-timer.ts), so every process and every member reads the same;
// at most one session per room is not over (the partial unique index). The xp ledger accepts a fourth source, a
// finished focus session.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('study_rooms')
    .addColumn('course', 'text')
    .addColumn('visibility', 'text', (c) =>
      c
        .notNull()
        .defaultTo('invite')
        .check(sql`visibility in ('invite')`),
    )
    .addColumn('join_code_prefix', 'text')
    .addColumn('join_code_hash', 'text', (c) => c.unique())
    .addColumn('join_code_created_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('study_rooms_by_owner').on('study_rooms').column('created_by').execute();

  await db.schema
    .createTable('study_room_members')
    .addColumn('room_id', 'uuid', (c) => c.notNull().references('study_rooms.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('joined_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('study_room_members_pkey', ['room_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('study_room_members_by_user')
    .on('study_room_members')
    .columns(['user_id', 'joined_at'])
    .execute();
  // A room's owner is always one of its members: every insert, however made (the API, the demo seed's bulk rows),
  // adds the owner's row in the same statement; rooms made before this migration get theirs here.
  await sql`
    create function study_room_owner_member() returns trigger language plpgsql as $$
    begin
      insert into study_room_members (room_id, user_id, joined_at) select id, created_by, created_at from added where created_by is not null;
      return null;
    end $$`.execute(db);
  await sql`create trigger study_rooms_owner_member after insert on study_rooms
    referencing new table as added for each statement execute function study_room_owner_member()`.execute(db);
  await sql`insert into study_room_members (room_id, user_id, joined_at)
    select id, created_by, created_at from study_rooms where created_by is not null`.execute(db);

  await db.schema
    .createTable('study_room_sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('room_id', 'uuid', (c) => c.notNull().references('study_rooms.id').onDelete('cascade'))
    .addColumn('started_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('duration_ms', 'integer', (c) => c.notNull().check(sql`duration_ms > 0`))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('paused_at', 'timestamptz')
    // The time spent paused before the current run, in milliseconds: the end moves by it.
    .addColumn('paused_ms', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('stopped_at', 'timestamptz')
    // Set once the finish is recorded (its event and the members' study activity), at the planned end.
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('study_room_sessions_one_live')
    .on('study_room_sessions')
    .column('room_id')
    .unique()
    .where(sql.ref('stopped_at'), 'is', null)
    .where(sql.ref('finished_at'), 'is', null)
    .execute();

  await sql`alter table xp_awards drop constraint xp_awards_source_check`.execute(db);
  await sql`alter table xp_awards add constraint xp_awards_source_check check (source in ('review', 'task', 'readiness', 'focus'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from xp_awards where source = 'focus'`.execute(db);
  await sql`alter table xp_awards drop constraint xp_awards_source_check`.execute(db);
  await sql`alter table xp_awards add constraint xp_awards_source_check check (source in ('review', 'task', 'readiness'))`.execute(
    db,
  );
  await db.schema.dropTable('study_room_sessions').execute();
  await sql`drop trigger study_rooms_owner_member on study_rooms`.execute(db);
  await sql`drop function study_room_owner_member()`.execute(db);
  await db.schema.dropTable('study_room_members').execute();
  await db.schema.dropIndex('study_rooms_by_owner').execute();
  await db.schema
    .alterTable('study_rooms')
    .dropColumn('course')
    .dropColumn('visibility')
    .dropColumn('join_code_prefix')
    .dropColumn('join_code_hash')
    .dropColumn('join_code_created_at')
    .execute();
}
