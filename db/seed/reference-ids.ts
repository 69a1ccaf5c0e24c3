// Ids of the reference data that ships with the product: derived from a natural key (UUIDv5, RFC 9562 §5.5), so
// every installation, and every re-seed, gives a record the same id, and the ids partners store keep working.
import { v5 as uuidv5 } from 'uuid';

/** Fixed for good: changing it would change every university id. The migration that moved old databases to these
 * ids (20261123_0003_stable_university_ids) holds its own copy, as migrations never import app code. */
export const UNIVERSITY_ID_NAMESPACE = '5e1f3b7c-2c4d-4a8e-9f60-7b1d2e3c4a5f';

/** A university's id: UUIDv5 of its website's host without a leading `www.` (`https://www.kaznu.kz` → `kaznu.kz`). */
export function universityId(website: string): string {
  return uuidv5(websiteHost(website), UNIVERSITY_ID_NAMESPACE);
}

function websiteHost(website: string): string {
  return new URL(website).hostname.toLowerCase().replace(/^www\./, '');
}
