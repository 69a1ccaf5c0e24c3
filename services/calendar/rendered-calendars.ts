// Writing a calendar is the one costly step of a feed read (ical-generator folds lines character by character: a
// student's largest calendar takes a few hundred milliseconds of CPU on the event loop). So each process keeps the
// last text of each student's calendar with a digest of the data it was written from, and writes it again only when
// the data changed; and a student whose data changes between every read gets at most RENDERS_PER_MINUTE new texts a
// minute, the last one serving meanwhile. One account can so cost at most a few renders a minute, whatever its
// feeds, its devices and its writes do. The feeds of one student may show different things (services/calendar/feeds.ts
// feedView), so a text is kept per student and view: a text served past the bound is always one written for that view.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FeedContent } from './feed-calendar.ts';

/** New texts of one student's calendar per minute and process; reads beyond get the last one (a minute stale at most). */
export const RENDERS_PER_MINUTE = 6;
/** Memory the kept texts may take in a process (the least recently read go first). */
const KEPT_CHARACTERS = 32 * 1024 * 1024;
/** Students whose recent writes are remembered (a few numbers each). */
const COUNTED_STUDENTS = 100_000;

interface Kept {
  digest: string;
  text: string;
}

const kept = new LRUCache<string, Kept>({
  maxSize: KEPT_CHARACTERS,
  sizeCalculation: (entry) => entry.text.length + 1,
});
/** When each student's texts, of any view, were written within the last minute. */
const written = new LRUCache<string, number[]>({ max: COUNTED_STUDENTS });

/**
 * The calendar text of one view of a student's feeds for `content`, written by `write` only when the content changed
 * and the student's bound allows.
 */
export function calendarText(
  of: { userId: string; view: object },
  content: FeedContent,
  write: () => string,
  nowMs: number,
): string {
  const key = `${of.userId} ${JSON.stringify(of.view)}`;
  const digest = createHash('sha256').update(JSON.stringify(content)).digest('base64url');
  const last = kept.get(key);
  if (last?.digest === digest) return last.text;
  const recent = (written.get(of.userId) ?? []).filter((at) => nowMs - at < 60_000);
  if (last && recent.length >= RENDERS_PER_MINUTE) return last.text;
  const text = write();
  kept.set(key, { digest, text });
  written.set(of.userId, [...recent, nowMs]);
  return text;
}
