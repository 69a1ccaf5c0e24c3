// Warnings an operator gives (services/accounts/warnings.ts, behind `users warn`): on the student's profile, newest
// first and at most 10, and stored as user.warned events whose payloads the spec describes.
import assert from 'node:assert/strict';
import { envelopeOf } from '../../../services/events/emit.ts';
import { warnStudent } from '../../../services/accounts/warnings.ts';
import { assertEventConforms } from '../../support/event-contract.ts';
import { generalApp } from '../../support/general-app.ts';

describe('warnings on the profile', () => {
  it('shows none to a new student', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    assert.deepEqual((await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body.warnings, []);
  });

  it('shows the 10 newest, newest first, to their student only, each also stored as user.warned', async () => {
    const ctx = await generalApp();
    const [alice, bob] = [await ctx.newStudent(), await ctx.newStudent()];
    const start = Date.UTC(2026, 10, 23, 9);
    const warnings = [];
    for (let i = 0; i < 12; i++)
      warnings.push(await warnStudent(ctx.db, alice.id, `Warning number ${i}`, new Date(start + i * 60_000)));

    const shown = (await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body.warnings;
    assert.deepEqual(shown, warnings.slice(2).reverse());
    assert.equal(shown[0]!.reason, 'Warning number 11');
    assert.equal(shown[0]!.created_at, new Date(start + 11 * 60_000).toISOString());
    // Changing the profile answers with the same warnings.
    const updated = await ctx.api.patch('/api/users/me').set(alice.headers).send({ bio: 'Hello' }).expect(200);
    assert.deepEqual(updated.body.warnings, shown);
    assert.deepEqual((await ctx.api.get('/api/users/me').set(bob.headers).expect(200)).body.warnings, []);

    const rows = await ctx.db
      .selectFrom('events')
      .select(['id', 'type', 'user_id', 'data', 'created_at'])
      .where('user_id', '=', alice.id)
      .where('type', '=', 'user.warned')
      .orderBy('created_at')
      .execute();
    const events = rows.map(envelopeOf);
    for (const event of events) assertEventConforms(event);
    assert.deepEqual(
      events.map((e) => e.data.object),
      warnings,
    );
    assert.deepEqual(
      events.map((e) => e.created_at),
      warnings.map((w) => w.created_at),
    );
  });
});
