// What a question is about, in a few words, so the tutor can name it back: the student's own deck, exam or course
// when the question mentions one, else the question itself without its question phrasing.
import type { StudentFacts } from './types.ts';

const MAX_TOPIC_CHARS = 60;
/** Openings that say how the student asks, not what about ("Can you explain", "What is", …). */
const GREETINGS = /^(?:(?:hi|hello|hey)\b[\s,!.]*)+/i;
const QUESTION_OPENINGS =
  /^(?:(?:and|so|but|ok|okay)\b[,\s]*)*(?:(?:can|could|would) you (?:please )?|please )?(?:explain|describe|tell me about|help me (?:with|understand)|what about|what(?:'s| is| are| does| do)|how (?:do|does|can|should) i|how (?:do|does)|why (?:is|are|does|do)|quiz me(?: on)?)?\s*/i;

/** The student's deck, exam subject or task course that the message names (case-insensitive), if any. */
export function namedMaterial(message: string, facts: StudentFacts): string | undefined {
  const text = message.toLowerCase();
  const names = [
    ...facts.due_decks.map((d) => d.title),
    ...facts.exams.map((e) => e.subject),
    ...facts.tasks.flatMap((t) => (t.course ? [t.course] : [])),
  ];
  return names.find((name) => text.includes(name.toLowerCase()));
}

/** "Can you explain the Krebs cycle?" → "the Krebs cycle"; long questions are cut at a word, with an ellipsis. */
export function topicOf(message: string): string {
  const sentence = message
    .trim()
    .replace(GREETINGS, '')
    .split(/[?!\n]|\.\s/)[0]!
    .trim();
  const topic = sentence.replace(QUESTION_OPENINGS, '').replace(/[.,;:\s]+$/, '') || 'your question';
  return cutAtWord(topic, MAX_TOPIC_CHARS);
}

/** The text as is when it fits in `max` characters, else cut at the last space before `max`, with an ellipsis. */
export function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${space > 0 ? cut.slice(0, space) : cut}…`;
}
