// Payments for plans: one row per provider event, whoever reports it (the provider's callback, an operator).
import type { Insertable } from 'kysely';
import type { Db } from '../connect.ts';
import type { PaymentsTable } from '../schema.ts';

const PAYMENT_COLUMNS = [
  'id',
  'user_id',
  'plan',
  'amount',
  'currency',
  'provider',
  'provider_event_id',
  'paid_at',
] as const;

export type NewPayment = Omit<Insertable<PaymentsTable>, 'id' | 'created_at'>;

export type PaymentRow = NonNullable<Awaited<ReturnType<typeof findPaymentOfProviderEvent>>>;

/** Inserts the payment unless its provider event is recorded already; undefined then (a redelivery). */
export async function insertPaymentOnce(trx: Db, payment: NewPayment) {
  return trx
    .insertInto('payments')
    .values(payment)
    .onConflict((oc) => oc.columns(['provider', 'provider_event_id']).doNothing())
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirst();
}

/** The payment recorded for a provider's event, if any. */
export async function findPaymentOfProviderEvent(db: Db, provider: NewPayment['provider'], providerEventId: string) {
  return db
    .selectFrom('payments')
    .select(PAYMENT_COLUMNS)
    .where('provider', '=', provider)
    .where('provider_event_id', '=', providerEventId)
    .executeTakeFirst();
}
