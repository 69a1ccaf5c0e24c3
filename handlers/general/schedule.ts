import {
  holidaysBetween,
  holidayYearStored,
  insertMissingHolidays,
  isHolidayCountryEnabled,
} from '../../db/queries/holidays.ts';
import { holidaysComputable } from '../../db/seed/holiday-years.ts';
import { findWeekFacts } from '../../db/queries/schedule.ts';
import type { Db } from '../../db/connect.ts';
import { problems } from '../../server/http/problems.ts';
import { taskBody } from '../../services/tasks/task-body.ts';
import type { GeneralHandlers, Schemas } from './types.ts';
import { localDate } from '../../domain/student-day.ts';
import { dayOfWeek, InvalidWeek, resolveWeek, type Week } from '../../domain/week.ts';
import {
  keptWalks,
  RangeProjection,
  WEEK_PROJECTED_MAX,
  WEEK_PROJECTION_BUDGET,
  WEEK_SERIES_MAX,
} from '../../domain/recurrence.ts';

/**
 * The week view. Days are the student's (profile time zone). A card counts on the later of its due date and today,
 * so the backlog of overdue cards shows on today in the current week and nowhere in other weeks.
 */
export const getSchedule: GeneralHandlers['getSchedule'] = async ({ query, principal }, { db, now }) => {
  if (query.week !== undefined && query.start !== undefined) {
    throw problems.invalidRequest([{ path: 'query', message: 'give week or start, not both' }]);
  }
  const zone = principal.time_zone;
  const at = now();
  let week: Week;
  try {
    week = resolveWeek(query, at, zone);
  } catch (error) {
    if (error instanceof InvalidWeek)
      throw problems.invalidRequest([
        { path: query.week !== undefined ? 'query.week' : 'query.start', message: error.message },
      ]);
    throw error;
  }
  const first = week.dates[0]!;
  const last = week.dates[6]!;
  const today = localDate(at, zone);
  const [{ tasks, heads, exams, cards }, holidays] = await Promise.all([
    findWeekFacts(db, principal.user_id, {
      from: week.starts_at,
      to: week.ends_at,
      firstDate: first,
      lastDate: last,
      today,
      zone,
      seriesLimit: WEEK_SERIES_MAX,
    }),
    principal.country_code ? countryHolidays(db, principal.country_code.toUpperCase(), week) : Promise.resolve([]),
  ]);

  const days: Schemas['ScheduleDay'][] = week.dates.map((date) => ({
    date,
    tasks: [],
    projected_tasks: [],
    exams: [],
    decks_due: [],
    holidays: [],
  }));
  const day = (date: string) => days.find((d) => d.date === date);
  // An instant's day from the week's own midnights: no zone arithmetic (Luxon's, through Intl) per task.
  const dayAt = (instant: Date) => {
    const index = dayOfWeek(week, instant);
    return index === undefined ? undefined : days[index];
  };
  for (const task of tasks) dayAt(task.due_at)?.tasks.push(taskBody(task));
  // One budget for every series of the week (heads come earliest open occurrence first): what a student stored cannot
  // make the view cost more than it. A series' walk through the week is kept for the next view (domain/recurrence.ts,
  // KeptWalks), which pays the same units for it.
  const projection = new RangeProjection(
    zone,
    week.starts_at,
    week.ends_at,
    WEEK_PROJECTION_BUDGET,
    WEEK_PROJECTED_MAX,
    keptWalks,
  );
  for (const head of heads) {
    for (const due of projection.occurrences(head.recurrence, head.series_starts_at, head.due_at)) {
      const due_at = due.toISOString();
      const { series_id, title, course, priority, recurrence } = head;
      dayAt(due)?.projected_tasks.push({
        projected: true,
        occurrence_key: `${series_id}/${due_at}`,
        series_id,
        title,
        course,
        due_at,
        priority,
        recurrence,
      });
    }
  }
  for (const d of days)
    d.projected_tasks.sort((a, b) => a.due_at.localeCompare(b.due_at) || a.series_id.localeCompare(b.series_id));
  for (const exam of exams) day(exam.exam_date)?.exams.push(exam);
  for (const holiday of holidays) day(holiday.on_date)?.holidays.push(holiday);
  for (const card of cards) {
    const target = day(card.on_date < today ? today : card.on_date);
    if (!target) continue;
    const deck = target.decks_due.find((d) => d.deck_id === card.deck_id);
    if (deck) deck.due_count += card.due_count;
    else target.decks_due.push({ deck_id: card.deck_id, title: card.title, due_count: card.due_count });
  }
  for (const d of days)
    d.decks_due.sort((a, b) => a.title.localeCompare(b.title) || a.deck_id.localeCompare(b.deck_id));

  return {
    status: 200,
    body: {
      week: week.week,
      start_date: first,
      end_date: last,
      time_zone: zone,
      country_code: principal.country_code,
      days,
    },
  };
};

/**
 * The week's holidays of an enabled country. The seed stores last year to two years ahead; a year outside that is
 * computed and stored on first use, as the partner surface's holiday list does. A year the holiday data does not
 * cover (db/seed/holiday-years.ts) has no holidays to show.
 */
async function countryHolidays(db: Db, countryCode: string, week: Week) {
  // Both reads are served from memory (db/queries/holidays.ts) once the process keeps holidays.
  if (!(await isHolidayCountryEnabled(db, countryCode))) return [];
  const rows = await holidaysBetween(db, countryCode, week.dates[0]!, week.dates[6]!);
  if (rows.length > 0) return rows;
  const years = [...new Set(week.dates.map((date) => Number(date.slice(0, 4))))];
  let filled = false;
  for (const year of years) {
    if (!holidaysComputable(year) || (await holidayYearStored(db, countryCode, year))) continue;
    const { computeHolidays } = await import('../../db/seed/holidays.ts');
    await insertMissingHolidays(db, computeHolidays(countryCode, year));
    filled = true;
  }
  return filled ? holidaysBetween(db, countryCode, week.dates[0]!, week.dates[6]!) : rows;
}
