// What the tutor is told about the student before it answers: their name, the decks with the most cards due, the
// nearest exams and the open tasks, read from their own data at the moment of the question. The facts are the
// student's, not the chat's: any caller that hands a student to a tutor gathers them here, with the same bounds.
import type { Db } from '../../db/connect.ts';
import { findExamFocus, findFirstName } from '../../db/queries/ai.ts';
import { listUpcomingExams } from '../../db/queries/exams.ts';
import { findDeck } from '../../db/queries/flashcards.ts';
import { listOpenTasks } from '../../db/queries/tasks.ts';
import { listDueDecks } from '../../db/queries/today.ts';
import { daysBetween, localDate } from '../../domain/student-day.ts';
import type { components } from '../../generated/general/types.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { Focus, StudentFacts } from './tutor/types.ts';

/** Decks, exams and tasks the tutor is told about, each. */
const FACTS_PER_KIND = 3;

/** One deck or exam of the student's the answer is about (TutorChatRequest.context). */
export type FactsFocus = components['schemas']['TutorChatRequest']['context'];

/** The student's situation now, from their own data; `focus` narrows it to one deck or exam (404 if not theirs). */
export async function tutorFacts(
  db: Db,
  student: { user_id: string; time_zone: string },
  now: Date,
  focus: FactsFocus,
): Promise<StudentFacts> {
  const userId = student.user_id;
  const zone = student.time_zone;
  const today = localDate(now, zone);
  const [firstName, dueDecks, exams, tasks, focused] = await Promise.all([
    findFirstName(db, userId),
    listDueDecks(db, userId, now, now).then(mostDueFirst),
    listUpcomingExams(db, userId, today, FACTS_PER_KIND),
    listOpenTasks(db, userId, { limit: FACTS_PER_KIND }),
    focusOf(db, userId, now, today, focus),
  ]);
  if (firstName === undefined) throw new NotFoundError('This account no longer exists.');
  return {
    first_name: firstName,
    now,
    time_zone: zone,
    due_decks: dueDecks,
    exams: exams.map((exam) => ({ ...exam, days_left: daysBetween(today, exam.exam_date) })),
    tasks,
    focus: focused,
  };
}

/** The decks with the most cards due (reviews and new cards alike), ties by title then id. */
function mostDueFirst(decks: Awaited<ReturnType<typeof listDueDecks>>) {
  return decks
    .map(({ id, title, due_reviews, due_new }) => ({ id, title, due: due_reviews + due_new }))
    .sort((a, b) => b.due - a.due || a.title.localeCompare(b.title) || a.id.localeCompare(b.id))
    .slice(0, FACTS_PER_KIND);
}

async function focusOf(db: Db, userId: string, now: Date, today: string, focus: FactsFocus): Promise<Focus | null> {
  if (focus?.deck_id) {
    const deck = await findDeck(db, userId, focus.deck_id, now);
    if (!deck) throw new NotFoundError(`No deck has id ${focus.deck_id}.`);
    return { kind: 'deck', id: deck.id, title: deck.title, cards: deck.card_count, due: deck.due_count };
  }
  if (focus?.exam_id) {
    const exam = await findExamFocus(db, userId, focus.exam_id, now);
    if (!exam) throw new NotFoundError(`No exam has id ${focus.exam_id}.`);
    return { kind: 'exam', ...exam, days_left: daysBetween(today, exam.exam_date) };
  }
  return null;
}
