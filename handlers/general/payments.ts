import { findNamedAccount } from '../../db/queries/users.ts';
import { recordPayment } from '../../services/payments/record-payment.ts';
import { verifyProviderSignature } from '../../services/payments/provider-signature.ts';
import { problems } from '../../server/http/problems.ts';
import type { GeneralHandlers } from './types.ts';

/** How long a provider is asked to wait while the operator sets PAYMENT_PROVIDER_SECRET. */
const NOT_CONFIGURED_RETRY_SECONDS = 300;

export const receivePaymentEvent: GeneralHandlers['receivePaymentEvent'] = async (
  { body, headers, rawBody },
  { db, now, paymentProviderSecret },
) => {
  if (!paymentProviderSecret) {
    throw problems.notConfigured(
      'This service accepts no payment provider events until its operator sets PAYMENT_PROVIDER_SECRET.',
      NOT_CONFIGURED_RETRY_SECONDS,
    );
  }
  verifyProviderSignature(paymentProviderSecret, rawBody, headers);
  const paid = body.data.object;
  const account = await findNamedAccount(db, paid.student);
  if (!account) {
    throw problems.unknownStudent(
      'account_id' in paid.student
        ? `No account has the id ${paid.student.account_id}.`
        : `No account has the e-mail ${paid.student.email}.`,
    );
  }
  const { payment } = await recordPayment(
    db,
    {
      user_id: account.id,
      plan: paid.plan,
      amount: paid.amount,
      currency: paid.currency.toUpperCase(),
      provider: 'provider',
      provider_event_id: body.id,
      paid_at: new Date(paid.paid_at),
    },
    now(),
  );
  return { status: 200, body: payment };
};
