// Password guessing with a stolen key (issue item 7): whoever holds a student's personal key (profile:write) tries
// current passwords on POST /api/users/me/password. Attempts are limited per account as the sign-in form's are (10
// failures), so a 429 comes within the first 11 tries, and the right password after the 40 wrong ones does not
// take the account over. The victim is another account, served meanwhile.
import { findPasswordHash } from '../../db/queries/users.ts';
import { verifyPassword } from '../../server/auth/passwords.ts';
import { sleep } from '../faults/support/fixture.ts';
import { Attacker } from './support/attacker.ts';
import { neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

const WRONG = 40;
/** A 429 must come among the first this many tries: the sign-in form's 10 failures, and one more. */
const REFUSED_WITHIN = 11;
const TRY_EVERY_MS = 200;
const NEW_PASSWORD = 'the thief owns this account now';

describe('noisy neighbour: password guessing with a stolen key', function () {
  this.timeout(90_000);
  let n: Neighbourhood;

  before(async () => {
    n = await neighbourhood('password');
  });
  after(() => n?.close());

  it(`${WRONG} wrong current passwords, then the right one, through a personal key: refused early, and the password stays`, async () => {
    const attacker = new Attacker(n.base, n.attacker.key);
    const statuses: number[] = [];
    const verdict = await victimUnderAttack(
      n,
      'password guessing',
      async (pressure) => {
        for (let i = 0; i <= WRONG; i++) {
          const sentAt = performance.now();
          const right = i === WRONG;
          const answer = await attacker.call(
            right ? 'POST /api/users/me/password (right)' : 'POST /api/users/me/password (wrong)',
            'POST',
            '/api/users/me/password',
            {
              current_password: right ? n.attacker.password : `guess number ${i}`,
              new_password: NEW_PASSWORD,
            },
          );
          statuses.push(answer.status);
          await sleep(Math.max(0, sentAt + TRY_EVERY_MS - performance.now()));
        }
        pressure.note(
          `${WRONG} wrong current passwords then the right one, one every ${TRY_EVERY_MS} ms, with the account's personal key`,
        );
        pressure.note(`statuses in order: ${runs(statuses)}`);
        pressure.note(attacker.describe());
      },
      [
        {
          method: 'POST',
          path: '/api/users/me/password',
          body: { current_password: 'not the password', new_password: 'not a new password either' },
        },
      ],
    );

    const firstRefusal = statuses.indexOf(429) + 1;
    const hash = await findPasswordHash(n.database.db, n.attacker.id);
    assertUnharmed(verdict, [
      ...unless(
        firstRefusal >= 1 && firstRefusal <= REFUSED_WITHIN,
        `the first 429 came at try ${firstRefusal || 'never'} (statuses ${runs(statuses)}); it must come within ${REFUSED_WITHIN}`,
      ),
      ...unless(statuses[WRONG] !== 204, 'the right password after the guesses changed the password (204)'),
      ...unless(await verifyPassword(hash!, n.attacker.password), 'the stored password is no longer the original'),
      ...unless(!(await verifyPassword(hash!, NEW_PASSWORD)), "the thief's password was stored"),
    ]);
  });
});

/** `[403, 403, 429]` as `403×2, 429×1`, in order. */
function runs(statuses: number[]): string {
  const out: Array<[number, number]> = [];
  for (const status of statuses) {
    const last = out[out.length - 1];
    if (last && last[0] === status) last[1]++;
    else out.push([status, 1]);
  }
  return out.map(([status, n]) => `${status}×${n}`).join(', ');
}
