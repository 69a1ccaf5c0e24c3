// The bounds of what one account may hold are numbers in one place (domain/bounds.ts): the services check them and
// the problem catalogue states them from there. The spec's text and docs/limits.md are written by hand; this holds
// every sentence of theirs that states a bound to the number the service enforces, so that a changed bound fails
// here until the words say it too.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  EVENT_RETENTION_DAYS,
  MAX_ENDPOINTS_PER_STUDENT,
  MAX_FEEDS_PER_STUDENT,
  MAX_OPEN_SERIES,
  MAX_OPEN_STREAMS,
  MAX_ROOM_MEMBERS,
  MAX_ROOMS_JOINED,
  MAX_ROOMS_OWNED,
} from '../../domain/bounds.ts';

const root = new URL('../../', import.meta.url).pathname;
/** A file's text with its line breaks and indentation as single spaces: YAML's folded text reads as one line. */
const text = (file: string) => readFileSync(root + file, 'utf8').replace(/\s+/g, ' ');

const PROBLEM = 'spec/components/schemas/Problem.yaml';
const LIMITS = 'docs/limits.md';

/** Each bound, and where a sentence states it: the file and a pattern whose first group is the number. */
const STATED: Array<{ bound: string; value: number; where: Array<[string, RegExp]> }> = [
  {
    bound: 'MAX_ROOMS_OWNED',
    value: MAX_ROOMS_OWNED,
    where: [
      [LIMITS, /study rooms owned \| account \| (\d+) \|/],
      ['spec/general/paths/rooms.yaml', /owns at most (\d+) rooms/],
      [PROBLEM, /`room_limit_reached` \(409, (\d+) rooms owned/],
    ],
  },
  {
    bound: 'MAX_ROOMS_JOINED',
    value: MAX_ROOMS_JOINED,
    where: [
      [LIMITS, /study rooms joined \(own included\) \| account \| (\d+) \|/],
      ['spec/general/paths/rooms.yaml', /is a member of at most (\d+), their own included/],
      ['spec/general/paths/rooms.yaml', /most recently joined first \(at most (\d+)\)/],
      ['spec/general/paths/rooms-join.yaml', /a student is in at most (\d+) rooms/],
      [PROBLEM, /`room_join_limit_reached` \(409, in (\d+) rooms/],
    ],
  },
  {
    bound: 'MAX_ROOM_MEMBERS',
    value: MAX_ROOM_MEMBERS,
    where: [
      [LIMITS, /members of a study room \| room \| (\d+) \|/],
      ['spec/general/paths/rooms-join.yaml', /A room has at most (\d+) members/],
      [PROBLEM, /`room_full` \(409, (\d+) members/],
    ],
  },
  {
    bound: 'MAX_FEEDS_PER_STUDENT',
    value: MAX_FEEDS_PER_STUDENT,
    where: [
      [LIMITS, /calendar feeds \| account \| (\d+) \|/],
      ['spec/general/paths/calendar-feeds.yaml', /A student has at most (\d+) feeds/],
      [PROBLEM, /`calendar_feed_limit_reached` \(409, (\d+) calendar feeds/],
    ],
  },
  {
    bound: 'MAX_OPEN_SERIES',
    value: MAX_OPEN_SERIES,
    where: [
      [LIMITS, /open recurring series \| account \| (\d+) \|/],
      ['spec/general/paths/tasks.yaml', /has at most (\d+) open recurring tasks/],
      ['spec/general/paths/task.yaml', /has at most (\d+) open recurring tasks/],
      [PROBLEM, /`series_limit_reached` \(409, (\d+) open recurring tasks/],
    ],
  },
  {
    bound: 'MAX_ENDPOINTS_PER_STUDENT',
    value: MAX_ENDPOINTS_PER_STUDENT,
    where: [
      [LIMITS, /webhook endpoints \| account \| (\d+) \|/],
      ['spec/general/paths/webhook-endpoints.yaml', /at most (\d+) endpoints/],
      ['spec/general/paths/webhook-endpoints.yaml', /oldest first \(at most (\d+),/],
    ],
  },
  {
    bound: 'MAX_OPEN_STREAMS',
    value: MAX_OPEN_STREAMS,
    where: [
      [LIMITS, /open streams \(the readiness and room streams, together\) \| account, every process \| (\d+) \|/],
      ['spec/general/paths/exam-readiness-stream.yaml', /An account holds at most (\d+) streams open at once/],
      ['spec/general/paths/room-stream.yaml', /at most (\d+) of every kind together/],
    ],
  },
  {
    bound: 'EVENT_RETENTION_DAYS',
    value: EVENT_RETENTION_DAYS,
    where: [
      [LIMITS, /changes feed \| account \| events of the last (\d+) days/],
      ['spec/general/paths/events.yaml', /Events are kept \*\*(\d+) days\*\*/],
      ['spec/general/paths/events.yaml', /one older than (\d+) days a `410`/],
      [PROBLEM, /older than the (\d+) days events are kept/],
    ],
  },
];

describe('the bounds, stated where the service enforces them', () => {
  for (const { bound, value, where } of STATED) {
    it(`${bound} (${value}): the spec's text and docs/limits.md say ${value}`, () => {
      for (const [file, pattern] of where) {
        const found = text(file).match(pattern);
        assert.ok(found, `${file} no longer has a sentence like ${pattern}: say the bound there, and here where`);
        assert.equal(Number(found[1]), value, `${file} states ${bound} as ${found[1]}`);
      }
    });
  }
});
