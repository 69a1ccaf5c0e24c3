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
      id: 't2',
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
  reminders: [],
};

describe('feedCalendar', () => {
  it('writes the same bytes for the same data at any time of the year', () => {
    const morning = feedCalendar(content, 'https://example.test', new Date('2026-11-27T08:00:00Z'));
    const evening = feedCalendar(content, 'https://example.test', new Date('2026-12-30T20:00:00Z'));
    assert.equal(evening, morning);
    assert.ok(morning.endsWith('END:VCALENDAR\r\n'));
  });

  it('starts the VTIMEZONE in the first year an event starts in', () => {
    const text = feedCalendar(content, 'https://example.test', new Date('2026-11-27T08:00:00Z'));
    assert.match(text, /BEGIN:VTIMEZONE\r\nTZID:Europe\/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:20250101T000000\r\n/);
    assert.match(text, /DTSTART;TZID=Europe\/Berlin:20250303T090000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO\r\n/);
  });
});

describe('feedCalendar: links and reminders', () => {
  const withExam: FeedContent = {
    ...content,
    exams: [{ id: 'e1', subject: 'Calculus', exam_date: '2026-12-15', notes: '', updated_at: new Date(0) }],
  };
  const events = (text: string) => text.split('BEGIN:VEVENT').slice(1);

  it('links each task, series and exam to its address in the API, under the service’s public URL', () => {
    const text = feedCalendar(withExam, 'https://api.example.test/', new Date('2026-11-27T08:00:00Z'));
    const urls = [...text.matchAll(/^URL;VALUE=URI:(.*)\r$/gm)].map((match) => match[1]);
    assert.deepEqual(urls, [
      'https://api.example.test/api/tasks/t1',
      'https://api.example.test/api/tasks/t2',
      'https://api.example.test/api/exams/e1',
    ]);
    assert.doesNotMatch(events(text).at(-1)!, /URL/, 'a holiday has no link');
    assert.match(text, /UID:task-t1@api\.example\.test\r\n/, 'UIDs keep naming the host');
  });

  it('gives each task, series and exam one display alarm per reminder, and holidays none', () => {
    const text = feedCalendar({ ...withExam, reminders: [30, 1440] }, 'https://example.test', new Date(0));
    const [task, series, exam, holiday] = events(text);
    for (const [event, summary] of [
      [task, 'Essay'],
      [series, 'Seminar'],
      [exam, 'Exam: Calculus'],
    ] as const) {
      const alarms = event!.split('BEGIN:VALARM').slice(1);
      assert.deepEqual(
        alarms.map((alarm) => alarm.match(/TRIGGER:(.*)\r/)![1]),
        ['-PT30M', '-P1D'],
      );
      for (const alarm of alarms) {
        assert.match(alarm, /ACTION:DISPLAY\r\n/);
        assert.ok(alarm.includes(`DESCRIPTION:${summary}\r\n`), 'a display alarm says what it is for');
      }
    }
    assert.doesNotMatch(holiday!, /VALARM/);
    assert.doesNotMatch(feedCalendar(withExam, 'https://example.test', new Date(0)), /VALARM/, 'none unless chosen');
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
