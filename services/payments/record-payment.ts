// Recording a payment, the one way both the provider's callback and the operator's CLI do it: in one transaction the
// payment is stored once per provider event, the plan changes and `payment.succeeded` is emitted. A redelivered
// provider event finds its payment and changes nothing.
import type { Db } from '../../db/connect.ts';
import {
  findPaymentOfProviderEvent,
  insertPaymentOnce,
  type NewPayment,
  type PaymentRow,
} from '../../db/queries/payments.ts';
import { changingPrincipals } from '../../db/queries/principal-changes.ts';
import { lockAccountPlan, setPlan } from '../../db/queries/users.ts';
import type { components } from '../../generated/general/types.ts';
import { emitEvent } from '../events/emit.ts';
import { planAfterPayment } from '../../domain/plans.ts';

export type Payment = components['schemas']['Payment'];

export interface RecordedPayment {
  payment: Payment;
  /** False when the provider event was recorded before: nothing changed this time. */
  recorded: boolean;
}

/** Throws PlanChangeError when the payment cannot change the plan (a contract payment without agreed limits). */
export async function recordPayment(db: Db, payment: NewPayment, now: Date): Promise<RecordedPayment> {
  // Opened by changingPrincipals, so that this process drops the account's principals as the plan commits.
  return changingPrincipals(db, async (trx) => {
    // Locked first, so concurrent payments of one account change its plan one after the other.
    const account = await lockAccountPlan(trx, payment.user_id);
    if (!account) throw new Error(`account ${payment.user_id} vanished while its payment was recorded`);
    const inserted = await insertPaymentOnce(trx, payment);
    if (!inserted) {
      const earlier = await findPaymentOfProviderEvent(trx, payment.provider, payment.provider_event_id);
      return { payment: paymentBody(earlier!), recorded: false };
    }
    await setPlan(trx, payment.user_id, planAfterPayment(account, payment.plan), now);
    const body = paymentBody(inserted);
    await emitEvent(trx, { type: 'payment.succeeded', studentId: payment.user_id, data: { object: body }, at: now });
    return { payment: body, recorded: true };
  });
}

function paymentBody({ user_id: _user, paid_at, ...fields }: PaymentRow): Payment {
  return { ...fields, paid_at: paid_at.toISOString() };
}
