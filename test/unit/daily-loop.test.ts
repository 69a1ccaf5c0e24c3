// The daily loop's planner on scenarios: pure inputs in, the whole plan out, no database.
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { planDailyLoop, type LoopInputs } from '../../domain/daily-loop.ts';
import type { LoopDeck, LoopExam, LoopTask } from '../../domain/loop-facts.ts';
import { spread } from '../../domain/comeback-plan.ts';
import { readiness } from '../../domain/readiness.ts';
import { localDate, studentDay } from '../../domain/student-day.ts';

const NOW = new Date('2026-11-22T10:00:00Z');

function inputs(overrides: Partial<LoopInputs> = {}): LoopInputs {
  return {
    now: NOW,
    time_zone: 'UTC',
    streak: 0,
    tasks: [],
    decks: [],
    exams: [],
    has_material: false,
    last_activity_before_today: null,
    studied_today: false,
    ...overrides,
  };
}

function task(id: string, due_at: string, extra: Partial<LoopTask> = {}): LoopTask {
  return { id, title: `Task ${id}`, course: null, due_at: new Date(due_at), ...extra };
}

function deck(id: string, due_reviews: number, extra: Partial<LoopDeck> = {}): LoopDeck {
  return { id, title: `Deck ${id}`, due_reviews, overdue_reviews: 0, due_new: 0, ...extra };
}

/** An exam whose readiness comes from `study_days` of the last 14 alone (no cards or tasks linked). */
function exam(id: string, exam_date: string, deck_ids: string[] = [], study_days = 0): LoopExam {
  return {
    id,
    subject: `Subject ${id}`,
    exam_date,
    deck_ids,
    readiness: readiness({ now: NOW, cards: [], tasks: { total: 0, completed: 0 }, study_days }),
  };
}

describe('planDailyLoop', () => {
  describe('nothing to do', () => {
    it('suggests starting something to a student with no tasks, decks or exams', () => {
      const loop = planDailyLoop(inputs());
      assert.equal(loop.next_action.kind, 'start_something');
      assert.equal(loop.next_action.item, null);
      assert.match(loop.next_action.reason, /add a task or create a deck/);
      assert.deepEqual(loop.readiness, []);
      assert.equal(loop.comeback_plan, null);
      assert.equal(loop.today, '2026-11-22');
    });

    it('suggests rest when the student has material but nothing is due', () => {
      const loop = planDailyLoop(
        inputs({ has_material: true, decks: [deck('d1', 0)], tasks: [task('t1', '2026-11-25T10:00:00Z')] }),
      );
      assert.equal(loop.next_action.kind, 'rest');
      assert.match(loop.next_action.reason, /Nothing is due/);
    });
  });

  describe('priority', () => {
    it('puts an overdue task before due cards, naming the task and how late it is', () => {
      const loop = planDailyLoop(
        inputs({
          has_material: true,
          decks: [deck('d1', 40)],
          tasks: [
            task('t-later', '2026-11-22T09:00:00Z'),
            task('t-late', '2026-11-22T08:00:00Z', { title: 'Essay', course: 'History' }),
          ],
        }),
      );
      assert.equal(loop.next_action.kind, 'do_task');
      assert.deepEqual(loop.next_action.item, { type: 'task', id: 't-late', title: 'Essay' });
      assert.equal(loop.next_action.due_at, '2026-11-22T08:00:00.000Z');
      assert.equal(loop.next_action.reason, 'Essay for History was due 2 hours ago; it comes before anything else.');
    });

    it('puts a task due within hours before due cards', () => {
      const loop = planDailyLoop(
        inputs({
          has_material: true,
          decks: [deck('d1', 12)],
          tasks: [task('t1', '2026-11-22T13:00:00Z', { course: 'History', title: 'Essay' })],
        }),
      );
      assert.equal(loop.next_action.kind, 'do_task');
      assert.equal(loop.next_action.reason, 'Essay for History is due in 3 hours; it comes before anything else.');
    });

    it('puts due cards before a task due later today, and that task before exam prep', () => {
      const later = task('t1', '2026-11-22T20:00:00Z');
      const withCards = planDailyLoop(
        inputs({ has_material: true, decks: [deck('d1', 3)], tasks: [later], exams: [exam('e1', '2026-11-24')] }),
      );
      assert.equal(withCards.next_action.kind, 'review_cards');
      const withoutCards = planDailyLoop(
        inputs({ has_material: true, tasks: [later], exams: [exam('e1', '2026-11-24')] }),
      );
      assert.equal(withoutCards.next_action.kind, 'do_task');
      assert.equal(withoutCards.next_action.reason, 'Task t1 is due today at 20:00.');
    });

    it('prefers a due deck linked to an exam in 2 days over a bigger unlinked deck', () => {
      const loop = planDailyLoop(
        inputs({
          has_material: true,
          streak: 5,
          decks: [deck('big', 50), deck('anatomy', 12, { title: 'Anatomy' })],
          exams: [exam('bio', '2026-11-24', ['anatomy'], 7)],
        }),
      );
      assert.equal(loop.next_action.kind, 'review_cards');
      assert.deepEqual(loop.next_action.item, { type: 'deck', id: 'anatomy', title: 'Anatomy' });
      assert.equal(loop.next_action.card_count, 12);
      assert.equal(
        loop.next_action.reason,
        '12 cards of Anatomy are due and they prepare for your Subject bio exam in 2 days; doing it now keeps your 5-day streak.',
      );
      assert.deepEqual(
        loop.readiness.map((r) => [r.exam_id, r.exam_date, r.days_left, r.readiness.percent]),
        [['bio', '2026-11-24', 2, 50]],
      );
    });

    it('takes the deck with most due cards when no exam claims one, counting new cards outside a comeback', () => {
      const loop = planDailyLoop(inputs({ has_material: true, decks: [deck('a', 5), deck('b', 2, { due_new: 10 })] }));
      assert.equal(loop.next_action.item?.id, 'b');
      assert.equal(loop.next_action.card_count, 12);
    });

    it('suggests preparing for an exam within two weeks when nothing is due, with its readiness', () => {
      const loop = planDailyLoop(
        inputs({ has_material: true, exams: [exam('far', '2027-01-20'), exam('near', '2026-11-30', [], 6)] }),
      );
      assert.equal(loop.next_action.kind, 'prepare_exam');
      assert.deepEqual(loop.next_action.item, { type: 'exam', id: 'near', title: 'Subject near' });
      assert.match(loop.next_action.reason, /in 8 days and your readiness is 43%/);
      assert.deepEqual(
        loop.readiness.map((r) => r.exam_id),
        ['near', 'far'],
      );
    });

    it('leaves past exams out of readiness', () => {
      const loop = planDailyLoop(
        inputs({ has_material: true, exams: [exam('past', '2026-11-21'), exam('today', '2026-11-22')] }),
      );
      assert.deepEqual(
        loop.readiness.map((r) => [r.exam_id, r.days_left]),
        [['today', 0]],
      );
    });
  });

  describe('comeback plan', () => {
    const comeback = inputs({
      has_material: true,
      streak: 0,
      // Last study on Nov 18: Nov 19, 20 and 21 were missed.
      last_activity_before_today: new Date('2026-11-18T19:00:00Z'),
      decks: [
        deck('anatomy', 70, { title: 'Anatomy', overdue_reviews: 60, due_new: 15 }),
        deck('latin', 30, { overdue_reviews: 30 }),
      ],
      exams: [exam('bio', '2026-11-27', ['anatomy'])],
    });

    it('spreads 90 overdue cards evenly over the 5 days before an exam, as dates, and pauses new cards', () => {
      const plan = planDailyLoop(comeback).comeback_plan;
      assert.ok(plan);
      assert.equal(plan.missed_days, 3);
      assert.equal(plan.last_study_date, '2026-11-18');
      assert.deepEqual(plan.backlog, { overdue_cards: 90, overdue_tasks: 0 });
      assert.deepEqual(
        plan.days.map((d) => [d.date, d.review_cards]),
        [
          ['2026-11-22', 18],
          ['2026-11-23', 18],
          ['2026-11-24', 18],
          ['2026-11-25', 18],
          ['2026-11-26', 18],
        ],
      );
      assert.equal(plan.plan_until, '2026-11-26');
      assert.equal(plan.exam_id, 'bio');
      assert.equal(plan.new_cards_paused, true);
      assert.equal(plan.new_cards_resume_on, '2026-11-27');
      assert.equal(
        plan.summary,
        'You missed 3 days. 90 overdue cards are spread over the 5 days before your Subject bio exam on 2026-11-27 (up to 18 cards a day); new cards are paused until 2026-11-27.',
      );
    });

    it('protects the streak with one card of the deck with the biggest backlog', () => {
      const plan = planDailyLoop(comeback).comeback_plan!;
      assert.equal(plan.streak_action.kind, 'review_cards');
      assert.equal(plan.streak_action.card_count, 1);
      assert.equal(plan.streak_action.item?.id, 'anatomy');
      const done = planDailyLoop({ ...comeback, studied_today: true }).comeback_plan!;
      assert.equal(done.streak_action.kind, 'rest');
      assert.match(done.streak_action.reason, /already counts/);
    });

    it('leaves new cards out of the next action while the backlog lasts, and claims no streak to keep', () => {
      const action = planDailyLoop({ ...comeback, streak: 9 }).next_action;
      assert.equal(action.kind, 'review_cards');
      assert.equal(action.item?.id, 'anatomy');
      assert.equal(action.card_count, 70);
      assert.match(action.reason, /New cards stay paused/);
      assert.doesNotMatch(action.reason, /streak/);
    });

    it('spreads overdue tasks in due order and cards with the remainder first, over 7 days without a near exam', () => {
      const plan = planDailyLoop({
        ...comeback,
        exams: [],
        decks: [deck('d', 9, { overdue_reviews: 9 })],
        tasks: [
          task('b', '2026-11-20T10:00:00Z'),
          task('a', '2026-11-19T10:00:00Z'),
          task('today', '2026-11-22T18:00:00Z'),
        ],
      }).comeback_plan!;
      assert.deepEqual(plan.backlog, { overdue_cards: 9, overdue_tasks: 2 });
      assert.deepEqual(
        plan.days.map((d) => [d.date, d.review_cards, d.tasks.map((t) => t.id)]),
        [
          ['2026-11-22', 2, ['a']],
          ['2026-11-23', 2, ['b']],
          ['2026-11-24', 1, []],
          ['2026-11-25', 1, []],
          ['2026-11-26', 1, []],
          ['2026-11-27', 1, []],
          ['2026-11-28', 1, []],
        ],
      );
      assert.equal(plan.exam_id, null);
      assert.equal(plan.new_cards_resume_on, '2026-11-29');
    });

    it('is null when yesterday had study activity, and for a student who never studied', () => {
      assert.equal(
        planDailyLoop({ ...comeback, last_activity_before_today: new Date('2026-11-21T23:59:00Z') }).comeback_plan,
        null,
      );
      assert.equal(planDailyLoop({ ...comeback, last_activity_before_today: null }).comeback_plan, null);
    });

    it('pauses nothing when no backlog piled up during the missed days', () => {
      const plan = planDailyLoop({ ...comeback, decks: [deck('d', 0, { due_new: 4 })] }).comeback_plan!;
      assert.equal(plan.new_cards_paused, false);
      assert.equal(plan.new_cards_resume_on, null);
      assert.deepEqual(plan.days, []);
      assert.match(plan.summary, /Nothing piled up/);
    });
  });

  describe('time zones', () => {
    it('computes today, due-today and missed days in the student zone when it differs from the UTC date', () => {
      // 20:30 UTC on Nov 22 is 01:30 on Nov 23 in Almaty (UTC+5).
      const now = new Date('2026-11-22T20:30:00Z');
      const loop = planDailyLoop(
        inputs({
          now,
          time_zone: 'Asia/Almaty',
          has_material: true,
          tasks: [task('t1', '2026-11-23T10:00:00Z')],
          // 21:00 UTC on Nov 21 is already Nov 22 in Almaty: yesterday, so nothing was missed.
          last_activity_before_today: new Date('2026-11-21T21:00:00Z'),
        }),
      );
      assert.equal(loop.today, '2026-11-23');
      assert.equal(loop.next_action.kind, 'do_task');
      assert.equal(loop.next_action.reason, 'Task t1 is due today at 15:00.');
      assert.equal(loop.comeback_plan, null);

      const utc = planDailyLoop(inputs({ now, has_material: true, tasks: [task('t1', '2026-11-23T10:00:00Z')] }));
      assert.equal(utc.today, '2026-11-22');
      assert.equal(utc.next_action.kind, 'rest');
    });

    it('keeps whole calendar days across the end of daylight saving time', () => {
      // New York leaves DST on 2026-11-01: that day has 25 hours.
      const day = studentDay(new Date('2026-11-01T12:00:00Z'), 'America/New_York');
      assert.deepEqual(day, {
        today: '2026-11-01',
        start: new Date('2026-11-01T04:00:00Z'),
        end: new Date('2026-11-02T05:00:00Z'),
      });

      const plan = planDailyLoop(
        inputs({
          now: new Date('2026-11-01T12:00:00Z'),
          time_zone: 'America/New_York',
          has_material: true,
          last_activity_before_today: new Date('2026-10-30T03:30:00Z'), // 23:30 on Oct 29 in New York
          decks: [deck('d', 6, { overdue_reviews: 6 })],
          exams: [exam('e', '2026-11-04')],
        }),
      ).comeback_plan!;
      assert.equal(plan.missed_days, 2);
      assert.equal(plan.last_study_date, '2026-10-29');
      assert.deepEqual(
        plan.days.map((d) => [d.date, d.review_cards]),
        [
          ['2026-11-01', 2],
          ['2026-11-02', 2],
          ['2026-11-03', 2],
        ],
      );
    });

    it('answers each day of a zone as Luxon does while a day is remembered, days asked in turn and again', () => {
      // Six days around New York's DST end, each asked at its first and last instant and at noon, round after round:
      // each answer comes from the remembered day (domain/student-day.ts) or is computed anew, and both must agree.
      const zone = 'America/New_York';
      const days = ['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04'];
      for (let round = 0; round < 3; round++) {
        for (const date of [...days].reverse()) {
          const start = DateTime.fromISO(date, { zone }).startOf('day');
          const expected = { today: date, start: start.toJSDate(), end: start.plus({ days: 1 }).toJSDate() };
          for (const instant of [
            expected.start,
            start.set({ hour: 12 }).toJSDate(),
            new Date(expected.end.getTime() - 1),
          ]) {
            assert.deepEqual(studentDay(instant, zone), expected, `${instant.toISOString()} in round ${round}`);
            assert.equal(localDate(instant, zone), date);
          }
        }
      }
    });
  });

  it('is deterministic: the same inputs in any order give the same plan', () => {
    const base = inputs({
      has_material: true,
      last_activity_before_today: new Date('2026-11-15T10:00:00Z'),
      tasks: [
        task('t2', '2026-11-20T10:00:00Z'),
        task('t1', '2026-11-20T10:00:00Z'),
        task('t3', '2026-11-21T10:00:00Z'),
      ],
      decks: [deck('b', 4, { overdue_reviews: 4 }), deck('a', 4, { overdue_reviews: 4 })],
      exams: [exam('y', '2026-11-25', ['a']), exam('x', '2026-11-25', ['b'])],
    });
    const first = planDailyLoop(base);
    assert.deepEqual(planDailyLoop(base), first);
    const shuffled = planDailyLoop({
      ...base,
      tasks: [...base.tasks].reverse(),
      decks: [...base.decks].reverse(),
      exams: [...base.exams].reverse(),
    });
    assert.deepEqual(shuffled, first);
    assert.equal(first.next_action.item?.id, 't1');
    assert.equal(first.comeback_plan?.streak_action.item?.id, 'a');
  });
});

describe('spread', () => {
  it('splits a total as evenly as whole numbers allow, the remainder on the first days', () => {
    assert.deepEqual(spread(92, 5), [19, 19, 18, 18, 18]);
    assert.deepEqual(spread(90, 5), [18, 18, 18, 18, 18]);
    assert.deepEqual(spread(2, 4), [1, 1, 0, 0]);
    assert.deepEqual(spread(0, 3), [0, 0, 0]);
  });
});
