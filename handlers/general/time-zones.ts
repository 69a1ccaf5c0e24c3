// Time-zone names are checked against the IANA database the runtime ships (Intl), which the schema cannot express.
import { problems } from '../../server/problems.ts';

export function assertTimeZone(timeZone: string | undefined, path: string): void {
  if (timeZone === undefined) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw problems.invalidRequest([{ path, message: `is not an IANA time zone name (e.g. Asia/Almaty), got "${timeZone}"` }]);
  }
}
