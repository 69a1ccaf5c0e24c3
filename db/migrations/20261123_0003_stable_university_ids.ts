// Frozen in time: a migration never imports application code, so it runs the same forever.
// Moves every university with a website from its random id to the stable one that seeding now gives it (UUIDv5 of
// the website's host), so ids match across installations; users follow through the foreign key, which from now on
// cascades updates of a university's id.
import { sql, type Kysely } from 'kysely';
import { v5 as uuidv5 } from 'uuid';

const UNIVERSITY_ID_NAMESPACE = '5e1f3b7c-2c4d-4a8e-9f60-7b1d2e3c4a5f';

function stableId(website: string): string | undefined {
  try {
    return uuidv5(new URL(website).hostname.toLowerCase().replace(/^www\./, ''), UNIVERSITY_ID_NAMESPACE);
  } catch {
    return undefined; // not a URL: the university keeps its id
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users drop constraint users_university_id_fkey`.execute(db);
  await sql`alter table users add constraint users_university_id_fkey foreign key (university_id) references universities (id) on delete set null on update cascade`.execute(
    db,
  );

  const rows: Array<{ id: string; website: string | null }> = await db
    .selectFrom('universities')
    .select(['id', 'website'])
    .execute();
  const taken = new Set(rows.map((r) => r.id));
  for (const row of rows) {
    const id = row.website ? stableId(row.website) : undefined;
    if (!id || taken.has(id)) continue; // already stable, or another row holds it (two rows with one host)
    await db.updateTable('universities').set({ id }).where('id', '=', row.id).execute();
    taken.add(id);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  // The ids stay: random ones cannot be restored, and stable ones are valid ids.
  await sql`alter table users drop constraint users_university_id_fkey`.execute(db);
  await sql`alter table users add constraint users_university_id_fkey foreign key (university_id) references universities (id) on delete set null`.execute(
    db,
  );
}
