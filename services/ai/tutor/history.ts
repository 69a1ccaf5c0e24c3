// The earlier turns of a conversation a tutor is shown: the most recent ones, as many as fit in a budget of
// characters, so that what one request sends to the model (and costs) does not grow with what the conversation
// holds. Whole turns only, newest first: an older turn that does not fit ends the history there.
import type { Turn } from './types.ts';

/** About 6,000 tokens of English: room for the last exchanges at full length, on top of the facts and the message. */
export const HISTORY_CHARS = 24_000;

/** `turns` oldest first; the newest of them whose lengths add up to at most `maxChars`, oldest first. */
export function recentTurns(turns: readonly Turn[], maxChars = HISTORY_CHARS): Turn[] {
  let total = 0;
  let first = turns.length;
  while (first > 0 && total + turns[first - 1]!.content.length <= maxChars) total += turns[--first]!.content.length;
  return turns.slice(first);
}
