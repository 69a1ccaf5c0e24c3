// users plan | users warn: an operator changes a student's plan or warns them. Both take effect at once: the plan is
// read from the database on every request, and the warning is on the profile and emitted as `user.warned`.
import type { Db } from '../../db/connect.ts';
import { findAccountPlan, setPlan } from '../../db/queries/users.ts';
import { limitsOf, type Plan, PlanChangeError, planChange } from '../../domain/plans.ts';
import { warnStudent } from '../../services/accounts/warnings.ts';
import { integerOption, note, parse, print, UsageError, withDb } from './shared.ts';

const PLANS: readonly Plan[] = ['free', 'plus', 'contract'];
/** Largest limit an operator may agree (the column is a PostgreSQL integer). */
const MAX_LIMIT = 2_147_483_647;
const MAX_REASON = 1000;

export async function changePlan(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      plan: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      'ai-per-hour': { type: 'string' },
    },
    ['EMAIL'],
  );
  const email = positionals[0]!;
  const plan = values.plan as Plan | undefined;
  if (!plan || !PLANS.includes(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  const limits = {
    per_minute: integerOption('--per-minute', values['per-minute'], 1, MAX_LIMIT),
    per_day: integerOption('--per-day', values['per-day'], 1, MAX_LIMIT),
    ai_per_hour: integerOption('--ai-per-hour', values['ai-per-hour'], 1, MAX_LIMIT),
  };
  const columns = await withDb(async (db) => {
    const account = await accountByEmail(db, email);
    let columns;
    try {
      columns = planChange(account, plan, limits);
    } catch (error) {
      throw error instanceof PlanChangeError ? new UsageError(error.message) : error;
    }
    await setPlan(db, account.id, columns, new Date());
    return columns;
  });
  const { per_minute, per_day, ai_per_hour } = limitsOf(columns);
  print(
    `${email} is on the ${plan} plan: ${per_minute} requests a minute, ${per_day} a day, ${ai_per_hour} an hour on /api/ai/*`,
  );
}

export async function warnUser(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { reason: { type: 'string' } }, ['EMAIL']);
  const email = positionals[0]!;
  const reason = values.reason?.trim() ?? '';
  if (reason.length === 0 || reason.length > MAX_REASON)
    throw new UsageError(`--reason is required: 1 to ${MAX_REASON} characters the student will read`);
  const warning = await withDb(async (db) => warnStudent(db, (await accountByEmail(db, email)).id, reason, new Date()));
  note(`warned ${email}; the warning is on their profile and sent as user.warned\n`);
  print(warning.id);
}

/** The account with this e-mail; a missing one fails the command (exit 1), like any other lookup that finds nothing. */
export async function accountByEmail(db: Db, email: string) {
  const account = await findAccountPlan(db, email);
  if (!account) throw new Error(`no account has the e-mail ${email}`);
  return account;
}
