// The sentences of the daily loop: short, concrete, in the student's terms.

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** "3 hours", "45 minutes", "2 days": the rounded distance between two instants. */
export function describeSpan(from: Date, to: Date): string {
  const minutes = Math.max(1, Math.round(Math.abs(to.getTime() - from.getTime()) / 60_000));
  if (minutes < 60) return plural(minutes, 'minute');
  const hours = Math.round(minutes / 60);
  if (hours < 48) return plural(hours, 'hour');
  return plural(Math.round(hours / 24), 'day');
}

/** "Essay for History", or just the title when the task has no course. */
export function taskName(task: { title: string; course: string | null }): string {
  return task.course ? `${task.title} for ${task.course}` : task.title;
}

/** "today", "tomorrow", "in 5 days". */
export function inDays(days: number): string {
  return days === 0 ? 'today' : days === 1 ? 'tomorrow' : `in ${days} days`;
}
