// db/prepared-statements.ts compiledOnce on the run's engine: a query built once answers each run with its own values,
// and a build that would bake a value into the statement instead of binding it is refused.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import { compiledOnce } from '../../../db/prepared-statements.ts';
import { testDatabase } from '../../support/shared-database.ts';

describe('compiledOnce', () => {
  it('binds each run its own values', async () => {
    const { db } = testDatabase();
    const echo = compiledOnce(['word', 'at'], (qb: Db, v: { word: string; at: Date }) =>
      qb.selectNoFrom([sql<string>`${v.word}::text`.as('word'), sql<Date>`${v.at}::timestamptz`.as('at')]),
    );
    const first = new Date('2026-11-27T10:00:00.000Z');
    const second = new Date('2001-01-01T00:00:00.000Z');
    const run = async (word: string, at: Date) =>
      (await echo(db, { word, at })).map((row) => [row.word, row.at.toISOString()]);
    assert.deepEqual(await run('one', first), [['one', first.toISOString()]]);
    assert.deepEqual(await run('two', second), [['two', second.toISOString()]]);
  });

  it('refuses a build that does not pass a value as a parameter', async () => {
    const { db } = testDatabase();
    const baked = compiledOnce(['word', 'limit'], (qb: Db, v: { word: string; limit: number }) =>
      qb.selectNoFrom(sql<string>`${v.word}::text`.as('word')),
    );
    await assert.rejects(baked(db, { word: 'one', limit: 3 }), /does not take limit as a parameter/);
  });
});
