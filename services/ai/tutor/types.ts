// The AI tutor as the chat handler sees it: given the student's message, the conversation so far and facts from
// the student's own data, a tutor streams a reply in pieces. Two implementations: the built-in local tutor
// (local.ts, the default) and any OpenAI-compatible chat-completions service (openai-compatible.ts).

export interface DueDeck {
  id: string;
  title: string;
  /** Cards due now. */
  due: number;
}

export interface UpcomingExam {
  id: string;
  subject: string;
  /** 'YYYY-MM-DD' in the student's zone. */
  exam_date: string;
  days_left: number;
}

export interface OpenTask {
  id: string;
  title: string;
  course: string | null;
  due_at: Date;
}

/** What the student asked the tutor to focus on (`context` of the request). */
export type Focus =
  | { kind: 'deck'; id: string; title: string; cards: number; due: number }
  | { kind: 'exam'; id: string; subject: string; exam_date: string; days_left: number; due: number };

/** The student's situation now, read from their data; the tutor answers from it. */
export interface StudentFacts {
  first_name: string;
  now: Date;
  time_zone: string;
  /** Decks with cards due now, most due first. */
  due_decks: DueDeck[];
  /** Exams from today on, nearest first. */
  exams: UpcomingExam[];
  /** Open tasks, earliest due first (overdue included). */
  tasks: OpenTask[];
  focus: Focus | null;
}

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

export interface TutorRequest {
  message: string;
  /** Earlier turns of the conversation, oldest first (empty for a new conversation). */
  history: Turn[];
  facts: StudentFacts;
  /** Aborted when the client disconnects: the tutor stops generating. */
  signal: AbortSignal;
}

export interface TutorUsage {
  input_tokens: number | null;
  output_tokens: number | null;
}

export type TutorEvent =
  | { type: 'delta'; text: string }
  | { type: 'finish'; finish_reason: 'stop' | 'length'; usage: TutorUsage };

export interface Tutor {
  /** Names what writes the replies (`message.started`'s `model`). */
  readonly model: string;
  /** The reply in pieces, then one `finish`. Throws TutorUnavailable when the provider fails. */
  reply(request: TutorRequest): AsyncIterable<TutorEvent>;
}

/** The model provider failed or could not be reached; the stream ends with a `tutor_unavailable` error event. */
export class TutorUnavailable extends Error {}
