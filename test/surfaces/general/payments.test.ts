// The payment provider's callback over HTTP, with bodies signed by the `standardwebhooks` library: a paid checkout
// records a payment, changes the plan before the next request and emits payment.succeeded; a redelivery changes
// nothing; bad, stale or missing signatures, unknown students and a service without a provider secret are refused.
import { setPlan } from '../../../db/queries/users.ts';
import assert from 'node:assert/strict';
import { envelopeOf } from '../../../services/events/emit.ts';
import { contractClient } from '../../support/contract.ts';
import { assertEventConforms } from '../../support/event-contract.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { buildApp, issueTestKey } from '../../support/partner-app.ts';
import { paidCheckout, providerSignature } from '../../support/payment-provider.ts';

type Ctx = Awaited<ReturnType<typeof generalApp>>;
const PATH = '/api/payments/provider-events';

/** POSTs the event as the provider would: the exact bytes that were signed. */
function deliver(
  ctx: Pick<Ctx, 'api'>,
  event: unknown,
  signature: (payload: string) => Record<string, string> = (p) => providerSignature(p),
) {
  const payload = JSON.stringify(event);
  return ctx.api.post(PATH).set('Content-Type', 'application/json').set(signature(payload)).send(payload);
}

async function paymentEvents(ctx: Ctx, student: Student) {
  const rows = await ctx.db
    .selectFrom('events')
    .select(['id', 'type', 'user_id', 'data', 'created_at'])
    .where('user_id', '=', student.id)
    .where('type', '=', 'payment.succeeded')
    .execute();
  const events = rows.map(envelopeOf);
  for (const event of events) assertEventConforms(event);
  return events;
}

async function paymentCount(ctx: Ctx, student: Student): Promise<number> {
  const rows = await ctx.db.selectFrom('payments').select('id').where('user_id', '=', student.id).execute();
  return rows.length;
}

describe('receivePaymentEvent', () => {
  it('records a paid checkout named by e-mail: the plan is plus on the very next request, and payment.succeeded is stored', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const before = await ctx.api.get('/api/users/me').set(alice.headers).expect(200);
    assert.equal(before.body.plan, 'free');

    const event = paidCheckout({ email: alice.email.toUpperCase() });
    const res = await deliver(ctx, event).expect(200);
    assert.deepEqual(
      { ...res.body, id: undefined },
      {
        id: undefined,
        plan: 'plus',
        amount: 4990,
        currency: 'USD',
        provider: 'provider',
        provider_event_id: event.id,
        paid_at: '2026-11-23T11:00:00.000Z',
      },
    );

    // The same token as before: nothing about the credential changed, only the account's plan.
    const after = await ctx.api.get('/api/users/me').set(alice.headers).expect(200);
    assert.equal(after.body.plan, 'plus');
    assert.equal(after.body.premium_tier, 'plus');
    assert.deepEqual(after.body.limits, { per_minute: 600, per_day: 100_000, ai_per_hour: 200 });
    assert.match(String(after.headers['ratelimit-policy']), /"minute"; q=600;/);

    const events = await paymentEvents(ctx, alice);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.student_id, alice.id);
    assert.deepEqual(events[0]!.data.object, res.body);
  });

  it('names the student by account id too', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const res = await deliver(ctx, paidCheckout({ account_id: alice.id })).expect(200);
    assert.equal(res.body.plan, 'plus');
    assert.equal((await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body.plan, 'plus');
  });

  it('answers a redelivered event with the payment recorded first, and records and emits nothing more', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const event = paidCheckout({ email: alice.email });
    const first = await deliver(ctx, event).expect(200);
    // A provider's retry is signed again (another webhook-id and timestamp); the event id is what makes it the same.
    const again = await deliver(ctx, event).expect(200);
    assert.deepEqual(again.body, first.body);
    const concurrent = await Promise.all([deliver(ctx, event), deliver(ctx, event)]);
    for (const res of concurrent) assert.deepEqual(res.body, first.body);
    assert.equal(await paymentCount(ctx, alice), 1);
    assert.equal((await paymentEvents(ctx, alice)).length, 1);
  });

  it('keeps a contract account on its contract when it pays for plus', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    await setPlan(
      ctx.db,
      alice.id,
      { plan: 'contract', contract_per_minute: 5000, contract_per_day: 500_000, contract_ai_per_hour: 900 },
      new Date(),
    );
    await deliver(ctx, paidCheckout({ account_id: alice.id })).expect(200);
    const profile = (await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body;
    assert.equal(profile.plan, 'contract');
    assert.deepEqual(profile.limits, { per_minute: 5000, per_day: 500_000, ai_per_hour: 900 });
    assert.equal((await paymentEvents(ctx, alice)).length, 1, 'the payment is still recorded and told');
  });

  it('refuses a body signed under another secret, a tampered body and missing signature headers with 401 invalid_signature', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const event = paidCheckout({ email: alice.email });
    const otherSecret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const wrongKey = await deliver(ctx, event, (p) => providerSignature(p, { secret: otherSecret })).expect(401);
    assert.equal(wrongKey.body.code, 'invalid_signature');
    const tampered = await deliver(ctx, { ...event, data: { object: { ...event.data.object, amount: 1 } } }, () =>
      providerSignature(JSON.stringify(event)),
    ).expect(401);
    assert.equal(tampered.body.code, 'invalid_signature');
    const unsigned = await deliver(ctx, event, () => ({})).expect(401);
    assert.equal(unsigned.body.code, 'invalid_signature');
    assert.match(unsigned.body.detail, /webhook-signature/);
    assert.equal(await paymentCount(ctx, alice), 0);
    assert.equal((await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body.plan, 'free');
  });

  it('refuses a signature more than 5 minutes old or ahead with 401 invalid_signature', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    const event = paidCheckout({ email: alice.email });
    const stale = await deliver(ctx, event, (p) =>
      providerSignature(p, { at: new Date(Date.now() - 6 * 60_000) }),
    ).expect(401);
    assert.equal(stale.body.code, 'invalid_signature');
    assert.match(stale.body.detail, /too old/i);
    const ahead = await deliver(ctx, event, (p) =>
      providerSignature(p, { at: new Date(Date.now() + 6 * 60_000) }),
    ).expect(401);
    assert.match(ahead.body.detail, /too new/i);
    assert.equal(await paymentCount(ctx, alice), 0);
  });

  it('is 422 unknown_student for an e-mail or account id no account has', async () => {
    const ctx = await generalApp();
    const byEmail = await deliver(ctx, paidCheckout({ email: 'nobody-here@example.com' })).expect(422);
    assert.equal(byEmail.body.code, 'unknown_student');
    assert.match(byEmail.body.detail, /nobody-here@example\.com/);
    const byId = await deliver(ctx, paidCheckout({ account_id: '00000000-0000-4000-8000-000000000000' })).expect(422);
    assert.equal(byId.body.code, 'unknown_student');
  });

  it('is 400 for an event the spec refuses, before the signature is looked at', async () => {
    const ctx = await generalApp();
    const event = paidCheckout({ email: 'a@example.com' });
    const res = await deliver(
      ctx,
      { ...event, data: { object: { ...event.data.object, plan: 'free' } } },
      () => ({}),
    ).expect(400);
    assert.equal(res.body.code, 'invalid_request');
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path.includes('plan')),
      JSON.stringify(res.body.errors),
    );
  });

  it('is 503 not_configured with Retry-After without PAYMENT_PROVIDER_SECRET', async () => {
    const app = await buildApp({ paymentProviderSecret: null });
    const res = await deliver({ api: contractClient(app) }, paidCheckout({ email: 'a@example.com' })).expect(503);
    assert.equal(res.body.code, 'not_configured');
    assert.equal(res.headers['retry-after'], '300');
  });
});

describe('plan vocabulary', () => {
  it('shows a contract account as pro on partner v1 and on the profile, from the one plan column', async () => {
    const ctx = await generalApp();
    const alice = await ctx.newStudent();
    await setPlan(
      ctx.db,
      alice.id,
      { plan: 'contract', contract_per_minute: 100, contract_per_day: 1000, contract_ai_per_hour: 10 },
      new Date(),
    );
    const { key } = await issueTestKey();
    const v1 = await ctx.api.get(`/api/v1/users/${alice.nickname}/public`).set('X-Service-API-Key', key).expect(200);
    assert.equal(v1.body.premium_tier, 'pro');
    const profile = (await ctx.api.get('/api/users/me').set(alice.headers).expect(200)).body;
    assert.equal(profile.plan, 'contract');
    assert.equal(profile.premium_tier, 'pro');
  });
});
