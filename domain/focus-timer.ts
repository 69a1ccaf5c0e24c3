// A study room's shared focus timer: a session's state is a pure function of its stored instants and the time asked
// about, so every member and every process reads the same without anyone ticking it. The transitions (start, pause,
// resume, stop) say what to store, or why the timer cannot do it now.
//
//   (none, finished or stopped) ──start──▶ running ──pause──▶ paused ──resume──▶ running
//   running ──(its duration of focus has passed)──▶ finished        running | paused ──stop──▶ stopped

/** The longest and shortest focus session a room may start, in minutes. */
export const MIN_FOCUS_MINUTES = 1;
export const MAX_FOCUS_MINUTES = 180;

/** What a session row stores. */
export interface FocusSession {
  started_at: Date;
  duration_ms: number;
  paused_at: Date | null;
  /** Time spent paused before the current run: the planned end moves by it. */
  paused_ms: number;
  stopped_at: Date | null;
}

export type FocusStatus = 'running' | 'paused' | 'finished' | 'stopped';

export interface FocusState {
  status: FocusStatus;
  /** Focus time left; 0 once finished. */
  remaining_ms: number;
  /** The instant a running session finishes, or finished; null while paused or once stopped. */
  ends_at: Date | null;
}

/** When the session's focus time runs out if nothing pauses it again. */
export function plannedEnd(session: FocusSession): Date {
  return new Date(session.started_at.getTime() + session.paused_ms + session.duration_ms);
}

export function focusState(session: FocusSession, now: Date): FocusState {
  const end = plannedEnd(session);
  if (session.stopped_at)
    return { status: 'stopped', remaining_ms: remainingAt(session, session.stopped_at), ends_at: null };
  if (session.paused_at)
    return { status: 'paused', remaining_ms: remainingAt(session, session.paused_at), ends_at: null };
  if (now.getTime() >= end.getTime()) return { status: 'finished', remaining_ms: 0, ends_at: end };
  return { status: 'running', remaining_ms: end.getTime() - now.getTime(), ends_at: end };
}

/** Focus time left as of `at` (a pause or stop instant, which the planned end does not yet reflect). */
function remainingAt(session: FocusSession, at: Date): number {
  return Math.max(0, Math.min(session.duration_ms, plannedEnd(session).getTime() - at.getTime()));
}

export type TimerAction =
  | { action: 'start'; duration_minutes: number }
  | { action: 'pause' }
  | { action: 'resume' }
  | { action: 'stop' };

/** What to store for an action: a new session, or the changes to the current one; or why not now. */
export type TimerStep =
  | { start: FocusSession }
  | { change: Partial<Pick<FocusSession, 'paused_at' | 'paused_ms' | 'stopped_at'>> }
  | { refused: string };

/** The step `action` takes on the room's latest session (undefined: it never had one) at `now`. */
export function timerStep(current: FocusSession | undefined, action: TimerAction, now: Date): TimerStep {
  const status = current ? focusState(current, now).status : undefined;
  const live = status === 'running' || status === 'paused';
  switch (action.action) {
    case 'start':
      if (live) return { refused: `The room's timer is ${status}; stop it before starting another session.` };
      return {
        start: {
          started_at: now,
          duration_ms: action.duration_minutes * 60_000,
          paused_at: null,
          paused_ms: 0,
          stopped_at: null,
        },
      };
    case 'pause':
      if (status !== 'running')
        return { refused: `Only a running timer can be paused; the room's is ${status ?? 'not started'}.` };
      return { change: { paused_at: now } };
    case 'resume':
      if (status !== 'paused' || !current?.paused_at)
        return { refused: `Only a paused timer can be resumed; the room's is ${status ?? 'not started'}.` };
      return {
        change: { paused_at: null, paused_ms: current.paused_ms + (now.getTime() - current.paused_at.getTime()) },
      };
    case 'stop':
      if (!live)
        return { refused: `Only a running or paused timer can be stopped; the room's is ${status ?? 'not started'}.` };
      return { change: { stopped_at: now } };
  }
}
