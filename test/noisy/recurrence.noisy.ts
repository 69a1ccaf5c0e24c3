// Dense recurrence (issue item 3): a free account creates 27 tasks that recur every hour of every day (a valid rule),
// then asks for its schedule a year later, again and again. What one request computes must be bounded whatever the
// account stores (projections computed incrementally, a cap on series or on a week's cost), so the event loop (the
// /livez probe) and the victim do not wait for it. The service may refuse some of it (a 429 for a series beyond its
// bound): the attacker's answers are printed by status and code.
import { Attacker } from './support/attacker.ts';
import { spread, describeSpread } from './support/latency.ts';
import { FREE_PER_MINUTE, neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

const SERIES = 27;
const EVERY_HOUR = `FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=${Array.from({ length: 24 }, (_, hour) => hour).join(',')}`;
const ATTACK_MS = 10_000;
const SCHEDULE_EVERY_MS = 300;
/**
 * The attack is made of work, not only of time: every series, then at least this many schedule reads, however long a
 * loaded machine takes (a machine at load 17 on 2 cores once spent the 10 s creating 17 series and read no schedule).
 * A quick machine goes on reading the schedule for the rest of ATTACK_MS.
 */
const SCHEDULE_READS = 10;

describe('noisy neighbour: dense recurrences projected a year ahead', function () {
  this.timeout(90_000);
  let n: Neighbourhood;

  before(async () => {
    n = await neighbourhood('recurrence');
  });
  after(() => n?.close());

  it(`${SERIES} hourly series and their schedule a year later leave the event loop and the victim alone`, async () => {
    const attacker = new Attacker(n.base, n.attacker.key);
    const scheduleTimes: number[] = [];
    const verdict = await victimUnderAttack(
      n,
      'dense recurrence',
      async (pressure) => {
        const until = performance.now() + ATTACK_MS;
        const dueAt = new Date(Date.now() + 86_400_000);
        dueAt.setUTCHours(0, 0, 0, 0);
        pressure.step('creates series');
        for (let i = 0; i < SERIES; i++) {
          await attacker.call('POST /api/tasks (hourly series)', 'POST', '/api/tasks', {
            title: `Every hour ${i}`,
            due_at: dueAt.toISOString(),
            course: 'Dense',
            recurrence: EVERY_HOUR,
          });
        }
        const aYearLater = new Date(dueAt.getTime() + 365 * 86_400_000).toISOString().slice(0, 10);
        pressure.step('reads the schedule');
        // The rest of the minute's budget on the schedule, one request at a time: at least SCHEDULE_READS, then until
        // the attack's end, each then cut at that end.
        let reads = 0;
        while (attacker.sent < FREE_PER_MINUTE && (reads < SCHEDULE_READS || performance.now() < until - 50)) {
          const sentAt = performance.now();
          const answer = await attacker.call(
            `GET /api/schedule?start=${aYearLater}`,
            'GET',
            `/api/schedule?start=${aYearLater}`,
            undefined,
            reads++ < SCHEDULE_READS ? undefined : until - sentAt,
          );
          if (answer.status !== 0) scheduleTimes.push(answer.ms);
          const next = sentAt + SCHEDULE_EVERY_MS - performance.now();
          if (next > 0) await new Promise((resolve) => setTimeout(resolve, next));
        }
        pressure.note(
          `${SERIES} tasks recurring ${EVERY_HOUR.replace(/BYHOUR=.*/, 'BYHOUR=0,…,23')}, then the schedule a year later (at least ${SCHEDULE_READS} times, and for the rest of ${ATTACK_MS / 1000} s)`,
        );
        pressure.note(`schedule answers to the attacker: ${describeSpread(spread(scheduleTimes))}`);
        pressure.note(attacker.describe());
      },
      [
        {
          method: 'POST',
          path: '/api/tasks',
          body: {
            title: 'Seminar',
            due_at: new Date(Date.now() + 86_400_000).toISOString(),
            course: null,
            recurrence: 'FREQ=WEEKLY;BYDAY=MO',
          },
        },
        { method: 'GET', path: '/api/schedule' },
      ],
    );

    assertUnharmed(verdict, [
      // The attack was made (series exist), and the attacker itself was answered every time, in words.
      ...unless(
        attacker.answered('POST /api/tasks (hourly series)', 201) >= 1,
        `no series was created: ${attacker.describe()}`,
      ),
      ...unless(scheduleTimes.length >= 1, "the attacker's schedule was never answered"),
      ...unless(
        attacker.unansweredOr5xx().length === 0,
        `the attacker got no answer or a 5xx: ${attacker.unansweredOr5xx().join('; ')}`,
      ),
    ]);
  });
});
