// The instructions a language model gets: who it is, and the student's situation as plain facts, so a model
// answers from the same data the built-in tutor uses.
import { localDate } from '../../../domain/student-day.ts';
import type { StudentFacts } from './types.ts';

export function systemPrompt(facts: StudentFacts): string {
  const { focus, time_zone: zone } = facts;
  const known = [
    ...facts.due_decks.map((d) => `- flashcard deck "${d.title}": ${d.due} cards due now`),
    ...facts.exams.map((e) => `- exam "${e.subject}" on ${e.exam_date} (${e.days_left} days left)`),
    ...facts.tasks.map(
      (t) =>
        `- open task "${t.title}"${t.course ? ` (${t.course})` : ''} due ${localDate(t.due_at, zone)}${t.due_at <= facts.now ? ' (overdue)' : ''}`,
    ),
  ];
  return [
    `You are a patient study tutor for ${facts.first_name}, a university student. Answer briefly and concretely,`,
    'explain step by step when asked to explain, and end with one next step the student can do now.',
    `Today is ${localDate(facts.now, zone)} (${zone}). Facts from the student's study data:`,
    ...(known.length > 0 ? known : ['- nothing is due and no exam is planned']),
    ...(focus?.kind === 'deck'
      ? [`The student asks about the deck "${focus.title}" (${focus.cards} cards, ${focus.due} due now).`]
      : []),
    ...(focus?.kind === 'exam'
      ? [
          `The student asks about the exam "${focus.subject}" on ${focus.exam_date} (${focus.due} cards due in its decks).`,
        ]
      : []),
  ].join('\n');
}
