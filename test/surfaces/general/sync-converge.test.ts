// Two devices edit offline, tasks and card reviews, then push, one order and then the other (each order on its own
// student with the same starting state). Whatever the order, each device's store equals the other's and the server's
// field by field after a pull; and the two orders end in the same state, but for what the server stamps (ids, the
// times of the writes), by the conflict rules of docs/features.md: a command changes only the fields it names, a
// closed task stays closed, a deleted one stays deleted, and every review is logged and takes its place in time: both
// devices review one card at interleaved times, and the card ends the same whichever pushed first (a review older than
// the card's last is replayed into its place). The card's xp of the day is the one thing that differs, by the
// documented rule (a card pays once a day, for the review that arrived first); the last assertions hold it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generalApp, type Student } from '../../support/general-app.ts';
import { pullUntilEqual, serverState, Store, type Obj } from '../../support/sync-store.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
const DUE = '2030-12-08T09:00:00Z';
/** A time of yesterday (UTC, the students' zone): every review on one study day, within the offline window. */
const yesterdayAt = (time: string) => `${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}T${time}Z`;

/** The starting state: three tasks, a deck of three cards; returns the ids by name. */
async function start(ctx: Ctx, student: Student) {
  const post = async (path: string, body: object) =>
    (await ctx.api.post(path).set(student.headers).send(body).expect(201)).body.id as string;
  const names = new Map<string, string>();
  for (const title of ['Reading', 'Lab', 'Essay'])
    names.set(title, await post('/api/tasks', { title, due_at: DUE, course: null }));
  const deck = await post('/api/flashcards/decks', { title: 'Bones' });
  names.set('Bones', deck);
  for (const front of ['Arm', 'Leg', 'Hand'])
    names.set(front, await post(`/api/flashcards/decks/${deck}/cards`, { front, back: `${front}'s bone` }));
  return names;
}

/** Each device's offline edits, naming objects by their starting names. */
function edits(reviewedAt: { a: string; b: string; shared: { a: [string, string]; b: [string, string] } }) {
  return {
    a: [
      { type: 'task_update', id: 'Reading', args: { priority: 'high' } },
      { type: 'task_close', id: 'Lab' },
      { type: 'task_update', id: 'Essay', args: { notes: 'outline first' } },
      { type: 'task_add', temp_id: 'from-a', args: { title: 'Made on A', due_at: DUE, course: null } },
      { type: 'task_update', id: 'from-a', args: { course: 'Anatomy' } },
      { type: 'card_review', id: 'Arm', args: { grade: 4, reviewed_at: reviewedAt.a } },
      { type: 'card_review', id: 'Hand', args: { grade: 5, reviewed_at: reviewedAt.shared.a[0] } },
      { type: 'card_review', id: 'Hand', args: { grade: 4, reviewed_at: reviewedAt.shared.a[1] } },
    ],
    b: [
      { type: 'task_update', id: 'Reading', args: { notes: 'chapter 3' } },
      { type: 'task_update', id: 'Lab', args: { title: 'Lab report' } },
      { type: 'task_delete', id: 'Essay' },
      { type: 'task_close', id: 'Reading' },
      { type: 'card_review', id: 'Leg', args: { grade: 3, reviewed_at: reviewedAt.b } },
      { type: 'card_review', id: 'Hand', args: { grade: 2, reviewed_at: reviewedAt.shared.b[0] } },
      { type: 'card_review', id: 'Hand', args: { grade: 3, reviewed_at: reviewedAt.shared.b[1] } },
    ],
  };
}

/** One order: both devices load, edit offline, push in `order`, and pull. */
async function play(ctx: Ctx, order: 'ab' | 'ba', times: Parameters<typeof edits>[0]) {
  const student = await ctx.newStudent();
  const names = await start(ctx, student);
  const devices = { a: new Store(), b: new Store() };
  await devices.a.pull(ctx, student);
  await devices.b.pull(ctx, student);
  const batches = edits(times);
  const statuses: Record<string, string[]> = {};
  for (const device of order === 'ab' ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
    const commands = batches[device].map((command) => ({
      uuid: randomUUID(),
      ...command,
      ...('id' in command ? { id: names.get(command.id as string) ?? command.id } : {}),
    }));
    const answer = (await ctx.api.post('/api/sync/commands').set(student.headers).send({ commands }).expect(200)).body;
    statuses[device] = answer.results.map((result: { status: string }) => result.status);
    for (const [temp, id] of Object.entries(answer.temp_id_mapping as Record<string, string>)) names.set(temp, id);
  }
  await pullUntilEqual(ctx, student, devices.a);
  await pullUntilEqual(ctx, student, devices.b);
  assert.deepEqual(devices.a.state(), devices.b.state());
  assert.deepEqual(devices.a.state(), await serverState(ctx, student));
  const reviews = await ctx.db
    .selectFrom('flashcard_reviews')
    .select(['card_id', 'grade', 'reviewed_at', 'applied'])
    .where('card_id', '=', names.get('Hand')!)
    .orderBy('reviewed_at')
    .execute();
  return { state: devices.a.state(), names, statuses, reviews };
}

/** The state with the server's ids named as the test named them, and what the server stamps at a write dropped. */
function comparable(state: Awaited<ReturnType<typeof play>>['state'], names: Map<string, string>) {
  const byId = new Map([...names].map(([name, id]) => [id, name]));
  const created = new Set([...state.cards, ...state.tasks].map((object) => object.created_at));
  const plain = (object: Obj) => {
    const { created_at: _c, updated_at: _u, completed_at, ...fields } = object;
    const out: Record<string, unknown> = { ...fields, completed: completed_at !== null };
    for (const key of ['id', 'deck_id', 'series_id'])
      if (typeof out[key] === 'string') out[key] = byId.get(out[key] as string) ?? 'unnamed';
    // A new card is due from its creation, a time the server stamps; a reviewed one from its review, the device's.
    if (created.has(out.next_due_at)) out.next_due_at = 'at its creation';
    return out;
  };
  const kinds = (['tasks', 'decks', 'cards', 'exams'] as const).map((kind) => [
    kind,
    state[kind].map(plain).sort((x, y) => String(x.id).localeCompare(String(y.id))),
  ]);
  const { xp, streak, plan, limits } = state.profile!;
  return { ...Object.fromEntries(kinds), profile: { streak, plan, limits }, xp: xp as number };
}

describe('two devices offline, pushing in both orders', () => {
  it('converge: each order leaves both devices equal to the server, and both orders the same state', async () => {
    const ctx = await generalApp();
    // The shared card: A at 10:15 and 11:15, B at 10:45 and 11:45, so either push has a review older than the card's
    // last when it comes second.
    const times = {
      a: yesterdayAt('10:00:00'),
      b: yesterdayAt('11:00:00'),
      shared: {
        a: [yesterdayAt('10:15:00'), yesterdayAt('11:15:00')] as [string, string],
        b: [yesterdayAt('10:45:00'), yesterdayAt('11:45:00')] as [string, string],
      },
    };
    const ab = await play(ctx, 'ab', times);
    const ba = await play(ctx, 'ba', times);
    // The edit of the task B deleted is refused (404) when B came first, applied and then deleted when A did.
    assert.deepEqual(ab.statuses, {
      a: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
      b: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
    });
    assert.equal(ba.statuses.a![2], 'error');

    const [x, y] = [comparable(ab.state, ab.names), comparable(ba.state, ba.names)];
    // Everything but the xp is the same, the shared card field by field included (but for its updated_at, a time the
    // server stamps at the write).
    const withoutXp = ({ xp: _xp, ...state }: typeof x) => state;
    assert.deepEqual(withoutXp(x), withoutXp(y));
    const tasks = new Map((x.tasks as Obj[]).map((task) => [task.id, task]));
    assert.deepEqual([...tasks.keys()].sort(), ['Lab', 'Reading', 'from-a']);
    assert.deepEqual(
      [tasks.get('Reading')!.priority, tasks.get('Reading')!.notes, tasks.get('Reading')!.completed],
      ['high', 'chapter 3', true],
    );
    assert.deepEqual([tasks.get('Lab')!.title, tasks.get('Lab')!.completed], ['Lab report', true]);
    assert.equal(tasks.get('from-a')!.course, 'Anatomy');

    // The four reviews of the shared card are logged in either order, and the card is where they put it in time
    // order (5, 2, 4, 3 from a new card): passed, failed (repetitions 0), then passed twice: repetitions 2, 6 days.
    const logged = (run: typeof ab) => run.reviews.map((review) => [review.grade, review.applied]);
    const inTime = [
      [5, true],
      [2, true],
      [4, true],
      [3, true],
    ];
    assert.deepEqual(logged(ab), inTime);
    assert.deepEqual(logged(ba), inTime);
    const shared = (state: typeof x) => (state.cards as Obj[]).find((card) => card.id === 'Hand')!;
    assert.deepEqual(
      [shared(x).repetitions, shared(x).interval_days, shared(x).last_reviewed_at],
      [2, 6, new Date(times.shared.b[1]).toISOString()],
    );
    assert.ok(Math.abs((shared(x).ease as number) - 2.14) < 1e-9, String(shared(x).ease));
    // Its xp of the day goes to the review that arrived first (once per card per day): grade 5's 3, or grade 2's 1.
    assert.equal(x.xp - y.xp, 3 - 1);
  });
});
