// The calendar text of a feed: the same data gives the same bytes whatever the hour (so a poll can get 304), and the
// VTIMEZONE follows the running tz data (Asia/Almaty moved from +06 to +05 on 1 March 2024).
import assert from 'node:assert/strict';
import { feedCalendar, rfcRule, type FeedContent } from '../../services/calendar/feed-calendar.ts';
import { vtimezone } from '../../services/calendar/vtimezone.ts';

const content: FeedContent = {
  timeZone: 'Europe/Berlin',
  tasks: [
    {
      id: 't1',
      title: 'Essay',
      course: 'History',
      notes: null,
      priority: 'high',
      due_at: new Date('2026-12-01T09:00:00Z'),
      updated_at: new Date('2026-11-20T10:00:00Z'),
    },
  ],
  series: [
    {
      series_id: 's1',
      title: 'Seminar',
      course: null,
      priority: 'normal',
      recurrence: 'FREQ=WEEKLY;BYDAY=MO',
      series_starts_at: new Date('2025-03-03T08:00:00Z'),
      updated_at: new Date('2026-11-20T10:00:00Z'),
    },
  ],
  exams: [],
  holidays: [{ on_date: '2026-12-16', name: 'Independence Day', description: null }],
};

describe('feedCalendar', () => {
  it('writes the same bytes for the same data at any time of the year', () => {
    const morning = feedCalendar(content, 'example.test', new Date('2026-11-27T08:00:00Z'));
    const evening = feedCalendar(content, 'example.test', new Date('2026-12-30T20:00:00Z'));
    assert.equal(evening, morning);
    assert.ok(morning.endsWith('END:VCALENDAR\r\n'));
  });

  it('starts the VTIMEZONE in the first year an event starts in', () => {
    const text = feedCalendar(content, 'example.test', new Date('2026-11-27T08:00:00Z'));
    assert.match(text, /BEGIN:VTIMEZONE\r\nTZID:Europe\/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:20250101T000000\r\n/);
    assert.match(text, /DTSTART;TZID=Europe\/Berlin:20250303T090000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO\r\n/);
  });
});

describe('vtimezone', () => {
  it('writes the offsets of the running tz data', () => {
    const almaty = vtimezone('Asia/Almaty', new Date('2024-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'));
    assert.match(almaty, /DTSTART:20240301T000000\r\nTZOFFSETFROM:\+0600\r\nTZOFFSETTO:\+0500\r\n/);
    const stJohns = vtimezone('America/St_Johns', new Date('2026-01-01T00:00:00Z'), new Date('2027-01-01T00:00:00Z'));
    assert.match(stJohns, /BEGIN:DAYLIGHT\r\nDTSTART:20260308T020000\r\nTZOFFSETFROM:-0330\r\nTZOFFSETTO:-0230\r\n/);
  });
});

describe('rfcRule', () => {
  it('turns a date-only UNTIL into the UTC time of that local day’s last second', () => {
    assert.equal(rfcRule('FREQ=DAILY;UNTIL=20270105', 'Asia/Almaty'), 'FREQ=DAILY;UNTIL=20270105T185959Z');
    assert.equal(
      rfcRule('FREQ=DAILY;UNTIL=20270105;INTERVAL=2', 'Europe/Berlin'),
      'FREQ=DAILY;UNTIL=20270105T225959Z;INTERVAL=2',
    );
    assert.equal(rfcRule('FREQ=DAILY;UNTIL=20270105T120000Z', 'Europe/Berlin'), 'FREQ=DAILY;UNTIL=20270105T120000Z');
  });
});
