import assert from 'node:assert/strict';
import { focusState, plannedEnd, timerStep, type FocusSession } from '../../domain/focus-timer.ts';

const t0 = new Date('2026-11-27T12:00:00.000Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
const session = (fields: Partial<FocusSession> = {}): FocusSession => ({
  started_at: t0,
  duration_ms: 25 * 60_000,
  paused_at: null,
  paused_ms: 0,
  stopped_at: null,
  ...fields,
});

/** Applies a step's change to a session, as the store does. */
function apply(current: FocusSession | undefined, step: ReturnType<typeof timerStep>): FocusSession {
  if ('refused' in step) throw new Error(step.refused);
  return 'start' in step ? step.start : { ...current!, ...step.change };
}

describe('focus timer', () => {
  it('runs for its duration, then reads finished at its planned end', () => {
    const s = session();
    assert.deepEqual(focusState(s, at(10)), { status: 'running', remaining_ms: 15 * 60_000, ends_at: at(25) });
    assert.deepEqual(focusState(s, at(25)), { status: 'finished', remaining_ms: 0, ends_at: at(25) });
    assert.deepEqual(focusState(s, at(90)), { status: 'finished', remaining_ms: 0, ends_at: at(25) });
  });

  it('a pause holds the remaining time, and resuming moves the end by the time paused', () => {
    let s = apply(session(), timerStep(session(), { action: 'pause' }, at(10)));
    assert.deepEqual(focusState(s, at(40)), { status: 'paused', remaining_ms: 15 * 60_000, ends_at: null });
    s = apply(s, timerStep(s, { action: 'resume' }, at(40)));
    assert.equal(s.paused_ms, 30 * 60_000);
    assert.deepEqual(plannedEnd(s), at(55));
    assert.equal(focusState(s, at(54)).status, 'running');
    assert.equal(focusState(s, at(55)).status, 'finished');
  });

  it('stop ends a running or paused session for good, keeping what was left', () => {
    const stopped = apply(session(), timerStep(session(), { action: 'stop' }, at(5)));
    assert.deepEqual(focusState(stopped, at(60)), { status: 'stopped', remaining_ms: 20 * 60_000, ends_at: null });
    const paused = apply(session(), timerStep(session(), { action: 'pause' }, at(20)));
    assert.equal(focusState(apply(paused, timerStep(paused, { action: 'stop' }, at(30))), at(31)).status, 'stopped');
  });

  it('refuses what the state does not allow: one live session per room', () => {
    const running = session();
    assert.ok('refused' in timerStep(running, { action: 'start', duration_minutes: 25 }, at(1)));
    assert.ok('refused' in timerStep(running, { action: 'resume' }, at(1)));
    assert.ok('refused' in timerStep(undefined, { action: 'pause' }, at(1)));
    assert.ok('refused' in timerStep(undefined, { action: 'stop' }, at(1)));
    const paused = session({ paused_at: at(5) });
    assert.ok('refused' in timerStep(paused, { action: 'pause' }, at(6)));
    assert.ok('refused' in timerStep(paused, { action: 'start', duration_minutes: 5 }, at(6)));
    // A finished or stopped session leaves the room free for the next.
    assert.ok('start' in timerStep(running, { action: 'start', duration_minutes: 50 }, at(25)));
    assert.ok('start' in timerStep(session({ stopped_at: at(3) }), { action: 'start', duration_minutes: 50 }, at(4)));
    assert.ok('refused' in timerStep(running, { action: 'stop' }, at(25)), 'a finished session cannot be stopped');
  });

  it('a new session starts now with the duration asked for', () => {
    assert.deepEqual(
      apply(undefined, timerStep(undefined, { action: 'start', duration_minutes: 50 }, at(0))),
      session({ duration_ms: 50 * 60_000 }),
    );
  });
});
