// How an ajv error reads in a problem's `errors[]`: for a request's validation (surface.ts) and for input checked
// against a schema of the spec inside another body (component-schemas.ts).
import type { ErrorObject } from 'ajv';

/**
 * One ajv error as the problem's `errors[]` entry. A property the schema does not allow is named in both the path and
 * the message: ajv's own message ("must NOT have additional properties") points at the object and leaves a reader to
 * guess which of its properties is the stray one.
 */
export function fieldError(error: ErrorObject): { path: string; message: string } {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'request';
  if (error.keyword === 'additionalProperties') {
    const { additionalProperty: extra } = error.params as { additionalProperty: string };
    return { path: `${path}.${extra}`, message: `is not a property of this object ("${extra}" must NOT be sent)` };
  }
  return { path, message: error.message ?? 'is invalid' };
}
