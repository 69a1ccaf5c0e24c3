// Refusals from below the edge (domain/errors.ts) are answered as the catalogue says, mapped once
// (server/http/problems.ts problemOf): the refusal's code and message, the catalogue's status and title, a wait as
// Retry-After, a credential's challenge as WWW-Authenticate, invalid parts as `errors`.
import assert from 'node:assert/strict';
import { MAX_ROOM_MEMBERS } from '../../domain/bounds.ts';
import {
  AuthenticationError,
  ConflictError,
  InputError,
  LimitError,
  NotFoundError,
  ReviewTimeError,
  UnavailableError,
} from '../../domain/errors.ts';
import { REALM } from '../../server/auth/realm.ts';
import { PROBLEM_CODES } from '../../server/http/problem-codes.ts';
import { dependencyFailure, problemOf, problems } from '../../server/http/problems.ts';

describe('refusals without transport, mapped to problems once', () => {
  it('takes the code and the detail from the refusal, the status and the title from the catalogue', () => {
    const full = problemOf(new LimitError('room_full', 'This room is full.', { max: MAX_ROOM_MEMBERS }))!;
    const title = PROBLEM_CODES.room_full.title;
    const expected = ['room_full', 409, title, 'This room is full.'];
    assert.deepEqual([full.code, full.status, full.title, full.detail], expected);
    assert.deepEqual(full.extra, {});
    const gone = problemOf(new NotFoundError('No such deck.'))!;
    assert.deepEqual([gone.code, gone.status, gone.detail], ['not_found', 404, 'No such deck.']);
    assert.equal(problemOf(new ConflictError('room_timer_conflict', 'Nothing runs.'))!.status, 409);
  });

  it("sends a bound's wait as Retry-After, a credential's challenge and invalid parts as the catalogue does", () => {
    const streams = problemOf(new LimitError('too_many_streams', 'Too many.', { max: 5, retryAfterSeconds: 7 }))!;
    assert.deepEqual([streams.status, streams.extra.headers], [429, { 'Retry-After': '7' }]);
    const revoked = problemOf(new AuthenticationError('Revoked.', 'invalid_token'))!;
    const challenge = `${REALM}, error="invalid_token"`;
    assert.deepEqual([revoked.status, revoked.extra.headers], [401, { 'WWW-Authenticate': challenge }]);
    assert.deepEqual(problemOf(new AuthenticationError('Revoked.'))!.extra.headers, { 'WWW-Authenticate': REALM });
    const errors = [{ path: 'body.time_zone', message: 'is not an IANA time zone name' }];
    assert.deepEqual(problemOf(new InputError(errors)), problems.invalidRequest(errors));
    // A review's time out of the offline window: its own code, with the field named as a validation error names it.
    const late = problemOf(new ReviewTimeError('commands.2.args.reviewed_at', 7))!;
    assert.deepEqual(late, problems.reviewedAtOutOfRange('commands.2.args.reviewed_at', 7));
    assert.deepEqual(
      [late.code, late.status, late.extra.errors],
      [
        'reviewed_at_out_of_range',
        400,
        [{ path: 'commands.2.args.reviewed_at', message: 'must be within the past 7 days and not in the future' }],
      ],
    );
  });

  it('answers a busy dependency with the 503 a failed dependency gets, and leaves other errors alone', () => {
    const busy = dependencyFailure(new UnavailableError('Every slot is busy.'))!;
    assert.deepEqual([busy.code, busy.status, busy.extra.headers?.['Retry-After']], ['service_unavailable', 503, '5']);
    assert.match(busy.detail, /^Every slot is busy\. Retry in/);
    assert.equal(problemOf(new Error('a bug')), undefined);
    assert.equal(dependencyFailure(new NotFoundError('x')), undefined);
  });
});
