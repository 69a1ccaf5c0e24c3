// db/queries/principal-changes.ts on the run's engine: a change to what a principal is read from reaches this
// process's listeners by the time its commit is answered, also when it joins a larger transaction (a payment that
// changes the plan), and never for a rollback. The NOTIFY to the other processes is not what these tests wait on: a
// listener told only by it could answer the student's next request with the principal kept from before the change.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { changingPrincipals, onPrincipalsCommitted } from '../../../db/queries/principal-changes.ts';
import { setPlan } from '../../../db/queries/users.ts';
import { recordPayment } from '../../../services/payments/record-payment.ts';
import { db, deleteNewStudents, newStudent } from '../../support/query-fixture.ts';

const FREE = { plan: 'free', contract_per_minute: null, contract_per_day: null, contract_ai_per_hour: null } as const;

describe('principal changes', () => {
  const told: string[] = [];
  before(() => onPrincipalsCommitted(db(), (userId) => told.push(userId)));
  after(deleteNewStudents);

  it('tells the listeners of a plan set in a transaction of its own as soon as it has committed', async () => {
    const student = await newStudent();
    await setPlan(db(), student, FREE, new Date());
    assert.ok(told.includes(student));
  });

  it("tells them of a payment's plan change by the time the payment is recorded, not only by the NOTIFY", async () => {
    const student = await newStudent();
    const { recorded } = await recordPayment(
      db(),
      {
        user_id: student,
        plan: 'plus',
        amount: 4990,
        currency: 'USD',
        provider: 'manual',
        provider_event_id: `manual-${randomUUID()}`,
        paid_at: new Date(),
      },
      new Date(),
    );
    assert.equal(recorded, true);
    assert.ok(told.includes(student));
  });

  it('tells nobody of a change rolled back with its transaction', async () => {
    const student = await newStudent();
    const failure = new Error('rolled back');
    await assert.rejects(
      changingPrincipals(db(), async (trx, changed) => {
        await setPlan(trx, student, FREE, new Date());
        await changed(student);
        throw failure;
      }),
      failure,
    );
    assert.ok(!told.includes(student));
  });

  it('refuses to join a transaction it did not open, whose commit it would not see', async () => {
    const student = await newStudent();
    await assert.rejects(
      db()
        .transaction()
        .execute((trx) => setPlan(trx, student, FREE, new Date())),
      /joins only a transaction that changingPrincipals opened/,
    );
  });
});
