// db/queries/today.ts on the run's engine: the daily loop's one statement, whose parts each have a boundary (due by
// the end of today, overdue before its start, studied since its start) and each read only the student's rows.
import assert from 'node:assert/strict';
import pg from 'pg';
import { findDailyLoopFacts, listDueDecks, type LoopDay } from '../../../db/queries/today.ts';
import {
  completeTask,
  db,
  deleteNewStudents,
  newCard,
  newDeck,
  newExam,
  newStudent,
  newTask,
  reviewCard,
} from '../../support/query-fixture.ts';
import { testDatabase } from '../../support/shared-database.ts';

const at = (iso: string) => new Date(iso);
/** 2 March 2026 in UTC, at noon. */
const DAY: LoopDay = {
  now: at('2026-03-02T12:00:00Z'),
  today: '2026-03-02',
  start: at('2026-03-02T00:00:00Z'),
  end: at('2026-03-03T00:00:00Z'),
};
const WINDOW = { zone: 'UTC', since: at('2026-02-23T00:00:00Z') };

describe('daily loop queries', () => {
  after(deleteNewStudents);

  it('counts due reviews, the overdue ones among them, and due new cards per deck, due up to now included', async () => {
    const student = await newStudent();
    const deck = await newDeck(student);
    const overdue = await newCard(student, deck, at('2026-02-20T00:00:00Z'));
    await reviewCard(student, overdue.id, at('2026-02-25T00:00:00Z'), at('2026-03-01T23:59:59Z'));
    const dueToday = await newCard(student, deck, at('2026-02-20T00:00:00Z'));
    await reviewCard(student, dueToday.id, at('2026-02-25T00:00:00Z'), DAY.start);
    await newCard(student, deck, DAY.now); // new, due exactly now
    await newCard(student, deck, at('2026-03-02T12:00:00.001Z')); // new, due after now
    const other = await newStudent();
    await newCard(other, await newDeck(other), at('2026-02-01T00:00:00Z'));

    const decks = await listDueDecks(db(), student, DAY.now, DAY.start);
    assert.deepEqual(
      decks.map((d) => ({
        id: d.id,
        due_reviews: Number(d.due_reviews),
        overdue_reviews: Number(d.overdue_reviews),
        due_new: Number(d.due_new),
      })),
      [{ id: deck, due_reviews: 2, overdue_reviews: 1, due_new: 1 }],
    );
  });

  it('reads open tasks due by the end of today, overdue first, and whether the student has any material', async () => {
    const student = await newStudent();
    const fresh = await findDailyLoopFacts(db(), student, DAY, WINDOW);
    assert.deepEqual(
      { tasks: fresh?.tasks, decks: fresh?.decks, has_material: fresh?.has_material, streak: fresh?.streak },
      { tasks: [], decks: [], has_material: false, streak: 0 },
    );

    const overdue = await newTask(student, at('2026-02-27T09:00:00Z'));
    const tonight = await newTask(student, at('2026-03-02T23:59:59.999Z'));
    await newTask(student, DAY.end);
    const done = await newTask(student, at('2026-03-02T08:00:00Z'));
    await completeTask(student, done.id, at('2026-03-02T07:00:00Z'));

    const facts = await findDailyLoopFacts(db(), student, DAY, WINDOW);
    assert.deepEqual(
      facts?.tasks.map((t) => ({ id: t.id, due_at: t.due_at.toISOString() })),
      [
        { id: overdue.id, due_at: '2026-02-27T09:00:00.000Z' },
        { id: tonight.id, due_at: '2026-03-02T23:59:59.999Z' },
      ],
    );
    assert.equal(facts?.has_material, true);
  });

  it('tells the last study before today from study today, over reviews and completed tasks', async () => {
    const student = await newStudent();
    const deck = await newDeck(student);
    const card = await newCard(student, deck, at('2026-02-20T00:00:00Z'));
    await reviewCard(student, card.id, at('2026-02-26T15:00:00Z'), at('2026-03-10T00:00:00Z'));
    const task = await newTask(student, at('2026-03-05T00:00:00Z'));
    await completeTask(student, task.id, at('2026-03-01T23:59:59.999Z'));

    const before = await findDailyLoopFacts(db(), student, DAY, WINDOW);
    assert.equal(before?.last_before_today?.toISOString(), '2026-03-01T23:59:59.999Z');
    assert.equal(before?.studied_today, false);
    assert.equal(Number(before?.study_days), 2);

    const late = await newTask(student, at('2026-03-05T00:00:00Z'));
    await completeTask(student, late.id, DAY.start);
    const after = await findDailyLoopFacts(db(), student, DAY, WINDOW);
    assert.equal(after?.studied_today, true);
    assert.equal(after?.last_before_today?.toISOString(), '2026-03-01T23:59:59.999Z');
    assert.equal(Number(after?.study_days), 3);
  });

  it('reads the upcoming exams from today on, and nothing for an account that does not exist', async () => {
    const student = await newStudent();
    await newExam(student, '2026-03-01');
    const today = await newExam(student, '2026-03-02');
    const facts = await findDailyLoopFacts(db(), student, DAY, WINDOW);
    assert.deepEqual(
      facts?.exams.map((e) => e.id),
      [today.id],
    );
    assert.equal(await findDailyLoopFacts(db(), '00000000-0000-4000-8000-000000000000', DAY, WINDOW), undefined);
  });

  // The statement runs prepared, and PostgreSQL soon plans it once for any values (a generic plan). A predicate bound
  // as a parameter cannot prove a partial index's own predicate then: `status = $n` read every task of the student.
  it('reads completed tasks through their partial index in the generic plan of its prepared statement (PostgreSQL)', async function () {
    const url = testDatabase().url;
    if (url === undefined) return this.skip();
    const student = await newStudent();
    const task = await newTask(student, at('2026-03-05T00:00:00Z'));
    await completeTask(student, task.id, at('2026-03-01T10:00:00Z'));
    const statement = await loopStatement(() => findDailyLoopFacts(db(), student, DAY, WINDOW));

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Without sequential scans the planner picks an index for every part; which one is what this asserts.
      await client.query('set plan_cache_mode = force_generic_plan; set enable_seqscan = off');
      await client.query(`prepare loop_facts as ${statement.text}`);
      const literals = statement.values.map((value) =>
        value === null
          ? 'null'
          : `'${(value instanceof Date ? value.toISOString() : String(value)).replaceAll("'", "''")}'`,
      );
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `explain execute loop_facts(${literals.join(', ')})`,
      );
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      assert.equal(
        plan.match(/tasks_user_completed_idx/g)?.length,
        3,
        `the last completion, study today and the study days read the partial index:\n${plan}`,
      );
    } finally {
      await client.end();
    }
  });
});

/** The daily loop's statement as pg sent it while `run` ran. */
async function loopStatement(run: () => Promise<unknown>): Promise<{ text: string; values: unknown[] }> {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    const config =
      typeof first === 'string' ? { text: first, values: second } : (first as { text: string; values?: unknown });
    if (/"last_completion"/.test(config.text))
      sent.push({ text: config.text, values: (config.values as unknown[] | undefined) ?? [] });
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query;
  }
  assert.equal(sent.length, 1, 'the loop is one statement');
  return sent[0]!;
}
