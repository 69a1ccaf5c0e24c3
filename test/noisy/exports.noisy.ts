// Exports (issue item 2): a free account of a few MB opens 10 exports at once and never reads them. Each export an
// account is allowed must not hold what every other account needs (the database pool), so the victim and the partner
// keep being served; exports beyond the account's bound are refused (429), not queued on the pool.
import { sql } from 'kysely';
import { sleep } from '../faults/support/fixture.ts';
import { Attacker } from './support/attacker.ts';
import { neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

const EXPORTS = 10;
const HOLD_MS = 10_000;
/** Tasks of ~1 KB each: an export of several MB, more than the socket buffers between server and client hold. */
const TASKS = 5_000;

describe('noisy neighbour: exports held open and never read', function () {
  this.timeout(90_000);
  let n: Neighbourhood;

  before(async () => {
    n = await neighbourhood('exports', {
      prepare: async (database, attacker) => {
        const now = new Date();
        const notes = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17);
        for (let first = 0; first < TASKS; first += 500) {
          const rows = Array.from({ length: Math.min(500, TASKS - first) }, (_, i) => ({
            user_id: attacker.id,
            title: `Reading ${first + i}`,
            course: 'Bulk',
            due_at: new Date(now.getTime() + (first + i) * 3_600_000),
            notes,
            updated_at: now,
          }));
          await database.db.insertInto('tasks').values(rows).execute();
        }
      },
    });
  });
  after(() => n?.close());

  it(`${EXPORTS} concurrent exports of a sizeable account, never read, leave the victim and the partner served`, async () => {
    const size = await sql<{
      bytes: number;
    }>`select sum(pg_column_size(t.*))::int as bytes from tasks t where user_id = ${n.attacker.id}`.execute(
      n.database.db,
    );
    const attacker = new Attacker(n.base, n.attacker.key);
    const verdict = await victimUnderAttack(
      n,
      'exports',
      async (pressure) => {
        const held = await Promise.all(
          Array.from({ length: EXPORTS }, () =>
            attacker.hold('GET /api/users/me/export', '/api/users/me/export', { read: 'never' }),
          ),
        );
        let inTransaction = 0;
        let poolWaiting = 0;
        const until = performance.now() + HOLD_MS;
        while (performance.now() < until) {
          // What the server holds for the attacker meanwhile: its backends inside a transaction, and requests waiting
          // for the pool.
          const { rows } = await sql<{
            n: number;
          }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and xact_start is not null and pid <> pg_backend_pid()`.execute(
            n.database.db,
          );
          inTransaction = Math.max(inTransaction, rows[0]!.n);
          poolWaiting = Math.max(poolWaiting, (await n.metric('db_pool_waiting')) ?? 0);
          await sleep(1_000);
        }
        const stillOpen = attacker.openHeld().length;
        attacker.releaseAll();
        pressure.note(
          `${EXPORTS} exports of a ${(size.rows[0]!.bytes / 1e6).toFixed(1)} MB account (${TASKS} tasks) sent at once and never read, held ${HOLD_MS / 1000} s`,
        );
        pressure.note(
          `exports admitted ${held.filter((h) => h.status === 200).length}, still in flight at the end of the hold ${stillOpen}`,
        );
        pressure.note(
          `server: at most ${inTransaction} backends in a transaction, at most ${poolWaiting} requests waiting for the pool`,
        );
        pressure.note(attacker.describe());
      },
      [{ method: 'GET', path: '/api/users/me/export' }],
    );

    const admitted = attacker.answered('GET /api/users/me/export', 200);
    const refused = attacker.answered('GET /api/users/me/export', 429);
    assertUnharmed(verdict, [
      // The attack was made: at least one export was served, and every other one refused in words, not dropped.
      ...unless(admitted >= 1, `no export was served to the attacker: ${attacker.describe()}`),
      ...unless(
        admitted + refused === EXPORTS,
        `exports neither served nor refused with a 429: ${attacker.describe()}`,
      ),
    ]);
  });
});
