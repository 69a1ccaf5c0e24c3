// Plan changes (domain/plans.ts): an operator's and a payment's, and the one mapping to v1's premium_tier.
import assert from 'node:assert/strict';
import { planAfterPayment, planChange, PlanChangeError, premiumTierOf, type PlanColumns } from '../../domain/plans.ts';

const FREE: PlanColumns = {
  plan: 'free',
  contract_per_minute: null,
  contract_per_day: null,
  contract_ai_per_hour: null,
};
const CONTRACT: PlanColumns = {
  plan: 'contract',
  contract_per_minute: 1000,
  contract_per_day: 90_000,
  contract_ai_per_hour: 50,
};

describe('plans', () => {
  it('maps contract to pro for partner v1 and keeps free and plus', () => {
    assert.deepEqual((['free', 'plus', 'contract'] as const).map(premiumTierOf), ['free', 'plus', 'pro']);
  });

  it('puts an account on a standard plan without contract limits, and refuses limits for one', () => {
    assert.deepEqual(planChange(CONTRACT, 'plus', {}), { ...FREE, plan: 'plus' });
    assert.throws(() => planChange(FREE, 'plus', { per_minute: 5 }), PlanChangeError);
  });

  it('needs every agreed limit for a new contract, and keeps those not given on an existing one', () => {
    assert.throws(() => planChange(FREE, 'contract', { per_minute: 5, per_day: 100 }), /give --ai-per-hour/);
    assert.deepEqual(planChange(FREE, 'contract', { per_minute: 5, per_day: 100, ai_per_hour: 1 }), {
      plan: 'contract',
      contract_per_minute: 5,
      contract_per_day: 100,
      contract_ai_per_hour: 1,
    });
    assert.deepEqual(planChange(CONTRACT, 'contract', { per_day: 100_000 }), {
      ...CONTRACT,
      contract_per_day: 100_000,
    });
  });

  it('never lowers an account on payment: plus upgrades free, a contract stays, a contract payment needs agreed limits', () => {
    assert.equal(planAfterPayment(FREE, 'plus').plan, 'plus');
    assert.deepEqual(planAfterPayment(CONTRACT, 'plus'), CONTRACT);
    assert.deepEqual(planAfterPayment(CONTRACT, 'contract'), CONTRACT);
    assert.throws(() => planAfterPayment(FREE, 'contract'), PlanChangeError);
  });
});
