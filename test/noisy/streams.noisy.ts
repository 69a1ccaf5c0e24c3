// Readiness streams (issue item 4): a free account opens as many readiness streams on one key as it can, then moves
// its readiness again and again. Open streams are bounded per account (a 429 beyond the bound), and a change costs one
// computation per student whatever the number of its streams, so the victim does not pay for the attacker's fan-out.
//
// A free account may send 60 requests a minute, and a stream lives 15 minutes (SSE_MAX_DURATION_MS): opening 60 a
// minute, it holds up to 900 at once. The suite has no quarter of an hour to spare, so it stands for those minutes:
// the opens go in bursts of at most 60, and between bursts the attacker's minute window is ended in Redis (as the
// passing of the minute would end it). The task changes then get a minute of their own.
import { randomUUID } from 'node:crypto';
import { insertExam, replaceTaskLinks } from '../../db/queries/exams.ts';
import { insertTask } from '../../db/queries/tasks.ts';
import { sleep } from '../faults/support/fixture.ts';
import { Attacker, type Held } from './support/attacker.ts';
import { FREE_PER_MINUTE, neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

const STREAM = '/api/exams/readiness/stream';
const ATTEMPTS = 1_000;
/** The opens stop here even if fewer were tried, so that a slow refusal cannot stretch the suite past its bound. */
const OPENING_FOR_MS = 20_000;
const CHANGES = 16;
const CHANGE_EVERY_MS = 400;

describe('noisy neighbour: readiness streams on one key', function () {
  this.timeout(120_000);
  let n: Neighbourhood;
  let taskId: string;

  before(async () => {
    n = await neighbourhood('streams', {
      // An exam a week ahead with one prep task: completing or reopening the task moves its readiness.
      prepare: async (database, attacker) => {
        const now = new Date();
        const examDate = new Date(now.getTime() + 7 * 86_400_000);
        const task = await insertTask(
          database.db,
          {
            user_id: attacker.id,
            title: 'Past paper',
            course: 'Chemistry',
            due_at: examDate,
            notes: null,
            priority: 'normal',
            recurrence: null,
            series_starts_at: null,
          },
          now,
        );
        const exam = await insertExam(
          database.db,
          { user_id: attacker.id, subject: 'Chemistry', exam_date: examDate.toISOString().slice(0, 10) },
          now,
        );
        await replaceTaskLinks(database.db, attacker.id, exam.id, [task.id]);
        taskId = task.id;
      },
    });
  });
  after(() => n?.close());

  it(`~${ATTEMPTS} streams opened on one key, then readiness moved ${CHANGES} times, leave the victim served`, async () => {
    const attacker = new Attacker(n.base, n.attacker.key);
    const streams: Held[] = [];
    let serverOpen: number | undefined;
    const verdict = await victimUnderAttack(
      n,
      'readiness streams',
      async (pressure) => {
        pressure.step('opens streams');
        const openingUntil = performance.now() + OPENING_FOR_MS;
        let tried = 0;
        while (tried < ATTEMPTS && performance.now() < openingUntil) {
          const burst = Math.min(FREE_PER_MINUTE, ATTEMPTS - tried);
          streams.push(
            ...(await Promise.all(
              Array.from({ length: burst }, () =>
                attacker.hold(`GET ${STREAM}`, STREAM, { read: 'drain', countEvents: 'readiness' }),
              ),
            )),
          );
          tried += burst;
          await n.nextMinute();
          attacker.newMinute();
        }
        serverOpen = await n.metric('sse_streams_open');
        const admitted = streams.filter((s) => s.status === 200).length;
        pressure.step('moves readiness');
        for (let i = 0; i < CHANGES; i++) {
          const sentAt = performance.now();
          await attacker.call('PATCH /api/tasks/{id} (complete, reopen)', 'PATCH', `/api/tasks/${taskId}`, {
            status: i % 2 === 0 ? 'completed' : 'open',
          });
          await sleep(Math.max(0, sentAt + CHANGE_EVERY_MS - performance.now()));
        }
        // The last move's events reach the streams still open.
        await sleep(500);
        const stillOpen = streams.filter((s) => s.status === 200 && s.open).length;
        const events = streams.reduce((sum, s) => sum + s.counted, 0);
        attacker.releaseAll();
        pressure.note(
          `${tried} stream opens (of ${ATTEMPTS} meant; the opening stops after ${OPENING_FOR_MS / 1000} s) in bursts of ≤ ${FREE_PER_MINUTE} (one a minute window), admitted ${admitted}, refused ${streams.length - admitted}`,
        );
        pressure.note(
          `streams open on the server (sse_streams_open) after the opens: ${serverOpen ?? 'not reported'}; still open after the changes: ${stillOpen}`,
        );
        pressure.note(
          `${CHANGES} task changes moving readiness, ${events} readiness events delivered to the attacker's streams`,
        );
        pressure.note(attacker.describe());
      },
      [
        { method: 'GET', path: STREAM },
        { method: 'PATCH', path: `/api/tasks/${randomUUID()}`, body: { status: 'completed' } },
      ],
    );

    assertUnharmed(verdict, [
      // The attack was made: streams were open when readiness moved, their events arrived, and every refusal was in
      // words.
      ...unless(
        streams.some((s) => s.status === 200),
        'no stream was admitted',
      ),
      ...unless(
        attacker.answered('PATCH /api/tasks/{id} (complete, reopen)', 200) >= CHANGES / 2,
        `the task changes were refused: ${attacker.describe()}`,
      ),
      ...unless(
        streams.some((s) => s.counted > 0),
        'no readiness event reached an open stream',
      ),
      ...unless(
        attacker.unansweredOr5xx().length === 0,
        `the attacker got no answer or a 5xx: ${attacker.unansweredOr5xx().join('; ')}`,
      ),
      ...unless(
        streams.every((s) => s.status === 200 || s.status === 429),
        'a stream open was answered neither 200 nor 429',
      ),
    ]);
  });
});
