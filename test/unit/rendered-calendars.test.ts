// A feed read writes the calendar only when the data changed, and a student's calendar is written at most
// RENDERS_PER_MINUTE times a minute whatever the reads and writes do: the CPU one account can spend on feeds is
// bounded.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { FeedContent } from '../../services/calendar/feed-calendar.ts';
import { calendarText, RENDERS_PER_MINUTE } from '../../services/calendar/rendered-calendars.ts';

const contentWith = (title: string) =>
  ({ timeZone: 'Asia/Almaty', tasks: [{ title }], series: [], exams: [], holidays: [] }) as unknown as FeedContent;

describe('calendar texts kept per student', () => {
  it('writes again only when the content changed', () => {
    const student = { userId: randomUUID(), view: {} };
    let writes = 0;
    const write = (text: string) => () => (writes++, text);
    assert.equal(calendarText(student, contentWith('a'), write('A'), 0), 'A');
    assert.equal(calendarText(student, contentWith('a'), write('A2'), 1_000), 'A', 'same content: the kept text');
    assert.equal(calendarText(student, contentWith('b'), write('B'), 2_000), 'B', 'changed content: a new text');
    assert.equal(writes, 2);
  });

  it(`writes a student's calendar at most ${RENDERS_PER_MINUTE} times a minute, serving the last text meanwhile`, () => {
    const student = { userId: randomUUID(), view: {} };
    let writes = 0;
    for (let n = 0; n < 50; n++) calendarText(student, contentWith(`change ${n}`), () => `text ${writes++}`, n * 100);
    assert.equal(writes, RENDERS_PER_MINUTE);
    assert.equal(
      calendarText(student, contentWith('later'), () => `text ${writes++}`, 61_000),
      `text ${RENDERS_PER_MINUTE}`,
      'a minute on, it writes again',
    );
  });

  it('keeps students apart', () => {
    const [one, two] = [
      { userId: randomUUID(), view: {} },
      { userId: randomUUID(), view: {} },
    ];
    calendarText(one, contentWith('x'), () => 'one', 0);
    assert.equal(
      calendarText(two, contentWith('x'), () => 'two', 0),
      'two',
    );
  });

  it("counts a student's views together, and past the bound serves each view only a text written for it", () => {
    const userId = randomUUID();
    const [plain, noted] = [
      { userId, view: { notes: false } },
      { userId, view: { notes: true } },
    ];
    calendarText(noted, contentWith('with notes'), () => 'noted', 0);
    for (let n = 1; n < RENDERS_PER_MINUTE; n++) calendarText(noted, contentWith(`with notes ${n}`), () => 'noted', n);
    assert.equal(
      calendarText(plain, contentWith('without'), () => 'plain', 10),
      'plain',
      'a view not written yet',
    );
    assert.equal(
      calendarText(plain, contentWith('without, changed'), () => 'plain 2', 20),
      'plain',
      'over the bound',
    );
    assert.equal(
      calendarText(noted, contentWith('with notes, changed'), () => 'noted 2', 30),
      'noted',
    );
  });
});
