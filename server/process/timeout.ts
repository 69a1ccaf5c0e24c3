// A bound on how long the caller waits for a dependency. The work itself may go on; the caller stops waiting.
export class TimeoutError extends Error {}

/**
 * `work`'s outcome, or a TimeoutError after `ms`. One promise and one timer per call: it bounds every Redis exchange of
 * the rate limits, once per request (Promise.race and finally made three more promises a call).
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
