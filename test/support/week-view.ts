// The week view (GET /api/schedule) as the schedule's surface tests read it: a week's days with their tasks and their
// projected occurrences.
import type { generalApp, Student } from './general-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];
export type ProjectedTask = {
  projected: true;
  occurrence_key: string;
  series_id: string;
  title: string;
  due_at: string;
};
export type WeekDay = { date: string; tasks: Array<{ id: string; due_at: string }>; projected_tasks: ProjectedTask[] };

/** The days of an ISO week (`2026-W49`) for the student, as the API answers them. */
export async function weekOf(api: Api, student: Student, week: string): Promise<WeekDay[]> {
  return (await api.get(`/api/schedule?week=${week}`).set(student.headers).expect(200)).body.days;
}
