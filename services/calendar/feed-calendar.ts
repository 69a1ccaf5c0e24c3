// A student's calendar as RFC 5545 iCalendar (ical-generator), for calendar apps subscribed to a feed URL. Timed
// events are written in the student's time zone (TZID, with a VTIMEZONE from vtimezone.ts), so a recurring task's
// RRULE repeats at the same wall-clock time across daylight-saving changes, as the service's own walk does
// (domain/recurrence.ts). The text depends only on the data: every DTSTAMP is a stored change time, never the time of
// the request, so an unchanged calendar keeps its ETag and a poll costs a 304.
//
// Each task and exam links back to itself (URL): its address in this API (`/api/tasks/{id}`, `/api/exams/{id}`), which
// answers the item to a credential that may read it, and which an app of the student's can claim as its own link to
// open its view of the item. The service has no web pages of its own for an item, so no other address would stay true.
// A recurring series links to its open occurrence. The reminders the student chose are display alarms (VALARM) before
// each task and exam; holidays carry neither.
import ical, { ICalAlarmType, ICalEventTransparency, type ICalAlarmData } from 'ical-generator';
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
    /** The series' open occurrence, which its link names. */
    id: string;
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
  /** Minutes before each task and exam that a reminder shows, in the order the student gave them. */
  reminders: readonly number[];
}

/**
 * The calendar of `content` as iCalendar text. `publicUrl` is the service's: its host names the service in every UID
 * (RFC 5545 §3.8.4.7), and the items' links start with it.
 */
export function feedCalendar(content: FeedContent, publicUrl: string, now: Date): string {
  const zone = content.timeZone;
  const host = new URL(publicUrl).hostname;
  const link = (path: string) => new URL(path, publicUrl).href;
  const alarms = (summary: string): ICalAlarmData[] =>
    content.reminders.map((minutes) => ({
      type: ICalAlarmType.display,
      triggerBefore: minutes * 60,
      description: summary,
    }));
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
      url: link(`/api/tasks/${task.id}`),
      alarms: alarms(task.title),
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
      url: link(`/api/tasks/${series.id}`),
      alarms: alarms(series.title),
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
      url: link(`/api/exams/${exam.id}`),
      alarms: alarms(`Exam: ${exam.subject}`),
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
