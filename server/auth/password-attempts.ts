// Guesses at an account's password through the API (the current_password of a password change), counted per account
// as the sign-in form counts them (server/oauth/router.ts): in the limit stores (Redis when configured, so every
// process shares one count), once before the password is checked, and given back when it was right. A stolen
// token or personal key can therefore guess at most PASSWORD_ATTEMPTS_PER_ACCOUNT times per window, however many
// requests it sends at once; past that even the right password is refused until the window ends. The window expires
// in the store, so a process that crashes mid-check leaks no count beyond it.
import { problems } from '../http/problems.ts';
import type { LimitStores } from '../limits/rate-limits.ts';

/** Failed password checks allowed per account and window: the sign-in form's number, for the same reason. */
export const PASSWORD_ATTEMPTS_PER_ACCOUNT = 10;
export const PASSWORD_ATTEMPTS_WINDOW_MS = 15 * 60_000;

export interface PasswordAttempts {
  /**
   * Runs `check` (does the given password match?) as one attempt of the account's; throws the 429 problem
   * `password_attempts_exceeded` without running it when the account has no attempt left.
   */
  attempt(userId: string, check: () => Promise<boolean>): Promise<boolean>;
}

export function passwordAttempts(stores: LimitStores): PasswordAttempts {
  // Fails closed, as the sign-in throttle does: a guard against guessing that lets every guess through while Redis
  // is away is no guard; a password change can wait for the counters (503).
  const counter = stores.counter(
    'password-attempts',
    [{ name: '15-minute', windowMs: PASSWORD_ATTEMPTS_WINDOW_MS }],
    'refuse',
  );
  return {
    async attempt(userId, check) {
      const counted = await counter.hit([userId], [PASSWORD_ATTEMPTS_PER_ACCOUNT]);
      const { totalHits, resetTime } = counted[0]!;
      if (totalHits > PASSWORD_ATTEMPTS_PER_ACCOUNT) {
        const retryAfterSeconds = Math.max(1, Math.ceil((resetTime - Date.now()) / 1000));
        throw problems.passwordAttemptsExceeded(
          PASSWORD_ATTEMPTS_PER_ACCOUNT,
          PASSWORD_ATTEMPTS_WINDOW_MS / 60_000,
          retryAfterSeconds,
        );
      }
      const matched = await check();
      if (matched) await counter.giveBack([userId], counted);
      return matched;
    },
  };
}
