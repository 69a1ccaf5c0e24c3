// The built-in tutor: no model, no network. It answers from the student's own data — what is due, which exam is
// near, which task is next — names the question's topic back and suggests one next step. Deterministic: the same
// message, history and facts give the same reply. It streams its reply sentence by sentence.
import { setTimeout as sleep } from 'node:timers/promises';
import { EXAM_PREP_DAYS } from '../../../domain/daily-loop.ts';
import { describeSpan, inDays, plural, taskName } from '../../../domain/loop-wording.ts';
import { namedMaterial, topicOf } from './topic.ts';
import type { StudentFacts, Turn, Tutor, TutorEvent, TutorRequest } from './types.ts';

export const LOCAL_TUTOR_MODEL = 'local-tutor';

/** The reply, as the pieces it is streamed in (each ends with a space except the last). */
export function localReply(message: string, history: readonly Turn[], facts: StudentFacts): string[] {
  const focusName =
    facts.focus?.kind === 'deck' ? facts.focus.title : facts.focus?.kind === 'exam' ? facts.focus.subject : undefined;
  const topic = focusName ?? namedMaterial(message, facts) ?? topicOf(message);
  const opening =
    history.length === 0
      ? `Let's look at ${topic} together, ${facts.first_name}.`
      : `Back to ${topic}, ${facts.first_name}.`;
  const pieces = [opening, situation(facts), nextStep(facts, topic)].filter((piece): piece is string => Boolean(piece));
  return pieces.map((piece, i) => (i < pieces.length - 1 ? `${piece} ` : piece));
}

/** What the student's data says now: the focus, or what is due, the nearest exam and the next task. */
function situation(facts: StudentFacts): string {
  const { focus } = facts;
  if (focus?.kind === 'deck') return `${focus.title} has ${plural(focus.cards, 'card')}, ${focus.due} due now.`;
  if (focus?.kind === 'exam') {
    return `Your ${focus.subject} exam is ${inDays(focus.days_left)} (${focus.exam_date}); its decks have ${plural(focus.due, 'card')} due now.`;
  }
  const parts: string[] = [];
  const [first, ...others] = facts.due_decks;
  if (first)
    parts.push(
      `You have ${plural(first.due, 'card')} due in ${first.title}${others.map((d) => `, ${d.due} in ${d.title}`).join('')}`,
    );
  const exam = facts.exams[0];
  if (exam) parts.push(`your ${exam.subject} exam is ${inDays(exam.days_left)} (${exam.exam_date})`);
  const task = facts.tasks[0];
  if (task)
    parts.push(
      `${taskName(task)} is ${task.due_at <= facts.now ? `overdue by ${describeSpan(task.due_at, facts.now)}` : `due in ${describeSpan(facts.now, task.due_at)}`}`,
    );
  if (parts.length === 0) return 'Nothing is due for you right now.';
  const sentence = parts.join('; ');
  return `${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`;
}

/** One concrete next step, by the same kind of priority as the daily loop: overdue work, due cards, a near exam. */
function nextStep(facts: StudentFacts, topic: string): string {
  const explain = `explain ${topic} in two sentences of your own and check them against your notes`;
  const { focus } = facts;
  if (focus?.kind === 'deck') {
    return focus.due > 0
      ? `Next step: review the ${plural(focus.due, 'due card')} in ${focus.title} now, then ${explain}.`
      : `Next step: ${explain}; ${focus.title} has nothing due until later.`;
  }
  if (focus?.kind === 'exam') {
    return focus.due > 0
      ? `Next step: review the ${plural(focus.due, 'due card')} for ${focus.subject} now, then ${explain}.`
      : `Next step: write three questions the ${focus.subject} exam could ask and answer them from memory, then ${explain}.`;
  }
  const overdue = facts.tasks.find((task) => task.due_at <= facts.now);
  if (overdue) return `Next step: finish ${taskName(overdue)} first, then ${explain}.`;
  const deck = facts.due_decks[0];
  if (deck) return `Next step: review the ${plural(deck.due, 'due card')} in ${deck.title} now, then ${explain}.`;
  const exam = facts.exams.find((e) => e.days_left <= EXAM_PREP_DAYS);
  if (exam) return `Next step: prepare for ${exam.subject} — ${explain}, then turn it into flashcards.`;
  const task = facts.tasks[0];
  if (task) return `Next step: make a start on ${taskName(task)}, then ${explain}.`;
  return `Next step: ${explain}, then add a deck or an exam so I can plan your reviews with you.`;
}

/** `pauseMs` between pieces makes the stream paced like a model's; 0 streams them as fast as the socket takes them. */
export function localTutor(options: { pauseMs?: number } = {}): Tutor {
  const pauseMs = options.pauseMs ?? 40;
  return {
    model: LOCAL_TUTOR_MODEL,
    async *reply({ message, history, facts, signal }: TutorRequest): AsyncGenerator<TutorEvent> {
      for (const [i, text] of localReply(message, history, facts).entries()) {
        if (i > 0 && pauseMs > 0) await sleep(pauseMs, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
        yield { type: 'delta', text };
      }
      yield { type: 'finish', finish_reason: 'stop', usage: { input_tokens: null, output_tokens: null } };
    },
  };
}
