// The frame of the spec-driven property tests: for each surface under test, a describe block with credentials that
// no limit stops, and the operations of its bundled spec.
import { readFileSync } from 'node:fs';
import { surfaces } from '../../../server/contract/surfaces.ts';
import { ROOMY, surfacesUnderTest, type Client, type SurfaceUnderTest } from '../../support/surfaces-under-test.ts';
import { operationsOf, type OperationUnderTest } from './requests.ts';

/** Calls `each` inside the surface's describe block for every operation; `client()` is ready once tests run. */
export function describeEveryOperation(
  each: (op: OperationUnderTest, under: SurfaceUnderTest, client: () => Client) => void,
): void {
  for (const surface of surfaces) {
    const under = surfacesUnderTest[surface];
    if (!under) continue;
    const spec = JSON.parse(
      readFileSync(new URL(`../../../generated/${surface}/openapi.json`, import.meta.url), 'utf8'),
    );
    describe(surface, () => {
      let client: Client;
      before(async () => {
        client = await under.client(ROOMY);
      });
      for (const op of operationsOf(spec)) each(op, under, () => client);
    });
  }
}
