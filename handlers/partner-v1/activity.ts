/** A user is active with study activity in the last 30 days; the partner surface uses this one definition. */
export const ACTIVE_WINDOW_DAYS = 30;

export function activeSince(now: Date): Date {
  return new Date(now.getTime() - ACTIVE_WINDOW_DAYS * 24 * 60 * 60 * 1000);
}
