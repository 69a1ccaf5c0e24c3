// A student's calendar as RFC 5545 iCalendar (ical-generator), for calendar apps subscribed to a feed URL. Timed
// events are written in the student's time zone (TZID, with a VTIMEZONE from vtimezone.ts), so a recurring task's
// RRULE repeats at the same wall-clock time across daylight-saving changes, as the service's own walk does
// (domain/recurrence.ts). The text depends only on the data: every DTSTAMP is a stored change time, never the time of
// the request, so an unchanged calendar keeps its ETag and a poll costs a 304.
import ical, { ICalEventTransparency } from 'ical-generator';
import { DateTime } from 'luxon';
import { vtimezone } from './vtimezone.ts';

/** How often the calendar asks apps to poll (REFRESH-INTERVAL, RFC 7986; X-PUBLISHED-TTL for older apps). */
export const REFRESH_SECONDS = 900;
/** How far ahead the VTIMEZONE lists transitions: beyond it, an app repeats the last offset it knows. */
const ZONE_YEARS_AHEAD = 5;

export interface FeedContent {
  /** The student's profile time zone: where due times and series are placed. */
  timeZone: string;
  tasks: ReadonlyArray<{
    id: string;
    title: string;
    course: string | null;
    notes: string | null;
    priority: string;
    due_at: Date;
    updated_at: Date;
  }>;
  series: ReadonlyArray<{
    series_id: string;
    title: string;
    course: string | null;
    priority: string;
    recurrence: string;
    series_starts_at: Date;
    updated_at: Date;
  }>;
  exams: ReadonlyArray<{ id: string; subject: string; exam_date: string; notes: string; updated_at: Date }>;
  holidays: ReadonlyArray<{ on_date: string; name: string; description: string | null }>;
}

/** The calendar of `content` as iCalendar text; `host` names the service in every UID (RFC 5545 §3.8.4.7). */
export function feedCalendar(content: FeedContent, host: string, now: Date): string {
  const zone = content.timeZone;
  // The VTIMEZONE spans whole years (from the first year an event starts in), so it changes once a year, not with
  // every request: the same data must give the same bytes.
  const starts = [now, ...content.tasks.map((t) => t.due_at), ...content.series.map((s) => s.series_starts_at)];
  const firstYear = DateTime.fromMillis(Math.min(...starts.map((d) => d.getTime())), { zone }).year;
  const zoneFrom = DateTime.fromObject({ year: firstYear }, { zone }).toJSDate();
  const zoneTo = DateTime.fromObject(
    { year: DateTime.fromJSDate(now, { zone }).year + ZONE_YEARS_AHEAD },
    { zone },
  ).toJSDate();
  const calendar = ical({
    name: 'Study companion',
    prodId: { company: 'study-companion.example', product: 'calendar feed' },
    timezone: { name: null, generator: (tz) => vtimezone(tz, zoneFrom, zoneTo) },
    ttl: REFRESH_SECONDS,
  });
  const at = (date: Date) => DateTime.fromJSDate(date, { zone });
  for (const task of content.tasks) {
    calendar.createEvent({
      id: `task-${task.id}@${host}`,
      stamp: task.updated_at,
      start: at(task.due_at),
      timezone: zone,
      summary: task.title,
      description: taskDescription(task),
    });
  }
  for (const series of content.series) {
    calendar.createEvent({
      id: `series-${series.series_id}@${host}`,
      stamp: series.updated_at,
      start: at(series.series_starts_at),
      timezone: zone,
      repeating: rfcRule(series.recurrence, zone),
      summary: series.title,
      description: taskDescription(series),
    });
  }
  for (const exam of content.exams) {
    calendar.createEvent({
      id: `exam-${exam.id}@${host}`,
      stamp: exam.updated_at,
      start: exam.exam_date,
      allDay: true,
      summary: `Exam: ${exam.subject}`,
      ...(exam.notes ? { description: exam.notes } : {}),
    });
  }
  content.holidays.forEach((holiday, index) => {
    calendar.createEvent({
      // A country can have two holidays on one date; their order is stable (by date, then name).
      id: `holiday-${holiday.on_date}-${index}@${host}`,
      stamp: new Date(`${holiday.on_date}T00:00:00Z`),
      start: holiday.on_date,
      allDay: true,
      summary: holiday.name,
      transparency: ICalEventTransparency.TRANSPARENT,
      ...(holiday.description ? { description: holiday.description } : {}),
    });
  });
  // RFC 5545 §3.1 ends every content line with CRLF, the last one too; ical-generator leaves the last one bare.
  return `${calendar.toString()}\r\n`;
}

function taskDescription(task: { course: string | null; priority: string; notes?: string | null }): string {
  return [task.course ? `Course: ${task.course}` : null, `Priority: ${task.priority}`, task.notes ?? null]
    .filter(Boolean)
    .join('\n');
}

/**
 * A stored rule as RFC 5545 wants it beside a DTSTART with a TZID: an UNTIL given as a date only (tasks take it as
 * including that whole local day) becomes the UTC time of that day's last second in the student's zone, since UNTIL
 * must then be a UTC date-time (§3.3.10).
 */
export function rfcRule(rule: string, zone: string): string {
  return rule.replace(/UNTIL=(\d{8})(?=;|$)/i, (_, date: string) => {
    const end = DateTime.fromFormat(`${date}235959`, 'yyyyMMddHHmmss', { zone }).toUTC();
    return `UNTIL=${end.toFormat("yyyyMMdd'T'HHmmss'Z'")}`;
  });
}
