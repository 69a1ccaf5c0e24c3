// payments record: an operator records a payment taken outside the provider (an invoice, a bank transfer). It changes
// the plan and emits `payment.succeeded` exactly like the provider's callback; the same provider event id twice
// records one payment.
import { randomUUID } from 'node:crypto';
import { PlanChangeError } from '../../domain/plans.ts';
import { recordPayment } from '../../services/payments/record-payment.ts';
import { accountByEmail } from './plans.ts';
import { integerOption, note, parse, print, UsageError, withDb } from './shared.ts';

const PAID_PLANS = ['plus', 'contract'] as const;

export async function recordManualPayment(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      plan: { type: 'string' },
      amount: { type: 'string' },
      currency: { type: 'string' },
      'provider-event-id': { type: 'string' },
    },
    ['EMAIL'],
  );
  const email = positionals[0]!;
  const plan = PAID_PLANS.find((p) => p === values.plan);
  if (!plan) throw new UsageError(`--plan must be one of ${PAID_PLANS.join(', ')}`);
  const amount = integerOption('--amount', values.amount, 0, 2_147_483_647);
  if (amount === undefined) throw new UsageError("--amount is required, in the currency's minor unit (4990 for 49.90)");
  if (!values.currency || !/^[A-Za-z]{3}$/.test(values.currency))
    throw new UsageError('--currency is required: an ISO 4217 code such as USD');
  const eventId = values['provider-event-id'] ?? `manual-${randomUUID()}`;
  if (!/^[\x21-\x7E]{1,255}$/.test(eventId))
    throw new UsageError('--provider-event-id is 1 to 255 printable characters without spaces');

  const now = new Date();
  const { payment, recorded } = await withDb(async (db) => {
    const account = await accountByEmail(db, email);
    const row = {
      user_id: account.id,
      plan,
      amount,
      currency: values.currency!.toUpperCase(),
      provider: 'manual' as const,
      provider_event_id: eventId,
      paid_at: now,
    };
    return recordPayment(db, row, now).catch((error: unknown) => {
      throw error instanceof PlanChangeError
        ? new UsageError(`${error.message}; set them with users plan first`)
        : error;
    });
  });
  note(
    recorded
      ? `recorded payment ${payment.provider_event_id} for ${email}: plan ${plan}, sent as payment.succeeded\n`
      : `payment ${payment.provider_event_id} was recorded before; nothing changed\n`,
  );
  print(payment.id);
}
