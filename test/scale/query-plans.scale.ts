// Every list query over the tables that grow with students reads an index, on a database seeded at scale: the
// plans PostgreSQL picks for a few hundred demo rows say nothing about a million students. Runs on the PostgreSQL
// of DATABASE_URL (required: the plans that matter are the server's), on a throwaway database of SCALE_STUDENTS
// generated students (20,000 by default: enough for the planner to prefer indexes, seeded in seconds).
// npm run test:scale   (own mocha config: the seeding takes longer than a unit test should)
import assert from 'node:assert/strict';
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../../db/migrate.ts';
import { listRecentMessages } from '../../db/queries/ai.ts';
import { findExamPreparation, findUpcomingPreparation, listExams, listUpcomingExams } from '../../db/queries/exams.ts';
import { listCards, listDecks } from '../../db/queries/flashcards.ts';
import { topUsersByXp } from '../../db/queries/leaderboards.ts';
import { listPersonalKeys } from '../../db/queries/personal-api-keys.ts';
import { findWeekFacts } from '../../db/queries/schedule.ts';
import { listOpenTasks, listTasks } from '../../db/queries/tasks.ts';
import { findDailyLoopFacts, listDueDecks } from '../../db/queries/today.ts';
import { getServiceStats } from '../../db/queries/stats.ts';
import { getUniversity } from '../../db/queries/universities.ts';
import { findPublicProfile } from '../../db/queries/users.ts';
import type { Database } from '../../db/schema.ts';
import { seedReference } from '../../db/seed/index.ts';
import { BULK_TIMEOUTS, seedScale } from '../../db/seed/scale.ts';
import { connect, type Db } from '../../db/connect.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../db/throwaway-database.ts';
import { statsByCounting } from '../support/stats-by-counting.ts';

/** Tables whose size grows with students: a sequential scan of one of them is a full scan of the service's data. */
const GROWING = new Set([
  'users',
  'tasks',
  'flashcard_decks',
  'flashcard_cards',
  'flashcard_reviews',
  'exams',
  'ai_messages',
  'ai_conversations',
  'api_keys',
]);
const STUDENTS = Number(process.env.SCALE_STUDENTS || 50_000);
const DAY_MS = 86_400_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

describe(`query plans on ${STUDENTS.toLocaleString('en')} generated students`, function () {
  this.timeout(600_000);
  let throwaway: ThrowawayDatabase;
  let seeded: Db;
  let pool: pg.Pool;
  let logged: Kysely<Database>;
  const captured: CompiledQuery[] = [];
  let student: { id: string; university_id: string; nickname: string; deck_id: string };
  let activityRowsAfterSeed: { rows: number; hours: number };

  before(async () => {
    const serverUrl = process.env.DATABASE_URL;
    if (!serverUrl)
      throw new Error(
        'the scale suite needs DATABASE_URL (CI: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run test:scale)',
      );
    throwaway = await createThrowawayDatabase(serverUrl, 'sc_scale');
    seeded = connect({ databaseUrl: throwaway.url }, { timeouts: BULK_TIMEOUTS });
    await migrateToLatest(seeded);
    await seedReference(seeded, { now: new Date() });
    await seedScale(seeded, { students: STUDENTS });
    // Read before any test's read of /stats could fold the rows.
    activityRowsAfterSeed = (
      await sql<{ rows: number; hours: number }>`
      select count(*)::int as rows, count(distinct hour)::int as hours from activity_hour_deltas`.execute(seeded)
    ).rows[0]!;
    student = (
      await sql<typeof student>`
      select u.id, u.university_id, u.nickname, d.id as deck_id from users u join flashcard_decks d on d.user_id = u.id
      where u.university_id is not null order by u.xp desc limit 1`.execute(seeded)
    ).rows[0]!;
    // The queries run through a Kysely that records the SQL it sends; each statement is then explained as sent.
    pool = new pg.Pool({ connectionString: throwaway.url, max: 2 });
    logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => void (event.level === 'query' && captured.push(event.query)),
    });
  });

  after(async () => {
    await logged?.destroy();
    await seeded?.destroy();
    await throwaway?.drop();
  });

  const now = new Date();
  const monthAgo = new Date(now.getTime() - 30 * DAY_MS);
  const nextWeek = new Date(now.getTime() + 7 * DAY_MS);
  const today = now.toISOString().slice(0, 10);
  const dayStart = new Date(`${today}T00:00:00Z`);
  const dayEnd = new Date(dayStart.getTime() + DAY_MS);
  const window = { zone: 'UTC', since: new Date(dayStart.getTime() - 13 * DAY_MS) };
  const cases: Array<[string, (db: Db) => Promise<unknown>]> = [
    ['v1 leaderboard, global (topUsersByXp)', (db) => topUsersByXp(db, { activeSince: monthAgo, limit: 100 })],
    [
      'v1 leaderboard, one university (topUsersByXp)',
      (db) => topUsersByXp(db, { activeSince: monthAgo, limit: 100, universityId: student.university_id }),
    ],
    ['v1 university with its counts (getUniversity)', (db) => getUniversity(db, student.university_id, monthAgo)],
    // Five counters summed from a few delta rows, the active users summed per hour of last activity (the window's
    // first, partial hour counted on users_last_active_idx).
    ['v1 stats (getServiceStats)', (db) => getServiceStats(db, monthAgo)],
    ['v1 public profile (findPublicProfile)', (db) => findPublicProfile(db, student.nickname)],
    ['tasks, first page (listTasks)', (db) => listTasks(db, student.id, {}, undefined, 20)],
    [
      'tasks, open, due this week (listTasks)',
      (db) => listTasks(db, student.id, { status: 'open', due_from: now, due_to: nextWeek }, undefined, 20),
    ],
    ['open tasks (listOpenTasks)', (db) => listOpenTasks(db, student.id, { dueBefore: nextWeek, limit: 10 })],
    ['decks (listDecks)', (db) => listDecks(db, student.id, now, { limit: 20 })],
    ['cards of a deck (listCards)', (db) => listCards(db, student.id, student.deck_id, { limit: 20 })],
    ['due cards of a deck (listCards)', (db) => listCards(db, student.id, student.deck_id, { limit: 20, dueAt: now })],
    ['exams (listExams)', (db) => listExams(db, student.id, { limit: 20 })],
    ['upcoming exams (listUpcomingExams)', (db) => listUpcomingExams(db, student.id, today, 5)],
    ['due decks (listDueDecks)', (db) => listDueDecks(db, student.id, now, dayStart)],
    [
      'daily loop, one statement (findDailyLoopFacts)',
      (db) => findDailyLoopFacts(db, student.id, { now, today, start: dayStart, end: dayEnd }, window),
    ],
    [
      'exam preparation (findExamPreparation)',
      (db) => findExamPreparation(db, student.id, ['00000000-0000-4000-8000-000000000000'], window),
    ],
    [
      'readiness of upcoming exams (findUpcomingPreparation)',
      (db) => findUpcomingPreparation(db, student.id, today, window, 100),
    ],
    [
      'schedule, one statement (findWeekFacts)',
      (db) =>
        findWeekFacts(db, student.id, {
          from: now,
          to: nextWeek,
          firstDate: today,
          lastDate: nextWeek.toISOString().slice(0, 10),
          today,
          zone: 'Asia/Almaty',
          seriesLimit: 50,
        }),
    ],
    [
      'tutor: recent messages (listRecentMessages)',
      (db) => listRecentMessages(db, student.id, '00000000-0000-4000-8000-000000000000', 20),
    ],
    ['personal keys (listPersonalKeys)', (db) => listPersonalKeys(db, student.id)],
  ];

  for (const [name, run] of cases) {
    it(`${name} reads indexes, never a whole growing table`, async () => {
      captured.length = 0;
      await run(logged as unknown as Db);
      assert.ok(captured.length > 0, 'the query ran through the recording Kysely');
      for (const query of captured) {
        const plan = await explain(query);
        const nodes = flatten(plan);
        const fullScans = nodes.filter((n) => n['Node Type'] === 'Seq Scan' && GROWING.has(n['Relation Name'] ?? ''));
        assert.deepEqual(
          fullScans.map((n) => n['Relation Name']),
          [],
          `sequential scan in:\n${query.sql}\n${JSON.stringify(plan, null, 1)}`,
        );
        // Every read of a growing table is an index scan, or a bitmap heap scan fed by one.
        const indexed = new Set(nodes.filter((n) => n['Index Name']).map((n) => n['Index Name']));
        assert.ok(indexed.size > 0, `no index read in:\n${query.sql}\n${JSON.stringify(plan, null, 1)}`);
      }
    });
  }

  it('the seed leaves one activity row per hour, so that /stats sums no more than the window has hours', () => {
    assert.ok(activityRowsAfterSeed.hours > 24, 'the students were active over many hours');
    assert.equal(activityRowsAfterSeed.rows, activityRowsAfterSeed.hours);
  });

  it('the stats counters equal count(*) after the seed', async () => {
    const counted = await statsByCounting(seeded, monthAgo);
    assert.deepEqual(await getServiceStats(seeded, monthAgo), counted);
    assert.equal(counted.total_users, STUDENTS);
  });

  async function explain(query: CompiledQuery): Promise<PlanNode> {
    const { rows } = await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `explain (format json) ${query.sql}`,
      query.parameters as unknown[],
    );
    return rows[0]!['QUERY PLAN'][0]!.Plan;
  }
});

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
