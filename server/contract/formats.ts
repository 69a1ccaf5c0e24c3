// The string formats requests are validated with: ajv-formats' RFC 3339 and UUID checks, narrowed to what the
// service can store and compute with. Shared by the server's validators and the property tests' idea of "valid".
import type { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { FIRST_INSTANT, LAST_INSTANT } from '../../domain/instants.ts';

// ajv-formats is CommonJS; under ESM its function is the default export's default.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * An RFC 3339 date-time that JavaScript reads as written and that lies in the years 0001–9999 in UTC: `23:59:60`
 * (a leap second) passes RFC 3339 but not Date, and `9999-12-31T23:00:00-05:00` is in the year 10000.
 */
export function isInstant(text: string): boolean {
  if (!rfc3339('date-time', text) || /:60(?:[.,]\d+)?(?:[zZ]|[+-]|$)/.test(text)) return false;
  const instant = Date.parse(text);
  return instant >= FIRST_INSTANT && instant <= LAST_INSTANT;
}

/** An RFC 3339 full-date in the years 0001–9999 (PostgreSQL has no year 0). */
export function isCalendarDate(text: string): boolean {
  return rfc3339('date', text) && !text.startsWith('0000');
}

function rfc3339(format: 'date' | 'date-time', text: string): boolean {
  return (fullFormats[format] as { validate: (s: string) => boolean }).validate(text);
}

export function addServiceFormats(ajv: Ajv): void {
  addFormats(ajv);
  // ajv-formats' uuid also accepts a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses (a 500 instead of a 400).
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('date-time', { type: 'string', validate: isInstant });
  ajv.addFormat('date', { type: 'string', validate: isCalendarDate });
}
