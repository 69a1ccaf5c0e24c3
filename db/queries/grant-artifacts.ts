// What an OAuth grant owns: everything an app or an institution can create or hold for a student through a credential
// that descends from the grant. This list is the one place that says it. Revocation (db/queries/oauth.ts
// revokeLiveGrants: the student's DELETE /api/users/me/authorizations/{client_id}, /oauth/revoke, a replayed code or
// refresh token, a password change, `institutions revoke`) ends every entry inside the revoking transaction, and
// test/surfaces/oauth/grant-artifacts.test.ts walks it: it creates each artifact through an app's credential, revokes,
// and checks each is gone; and it fails when a table with a `grant_id` column (or a foreign key to oauth_grants) has no
// entry here. A new thing a grant can own is a new entry, or that test fails.
//
// Account deletion needs none of this: every grant and everything it owns goes with the account (foreign keys cascade
// from users), and the deletion notifies the principals channel as a revocation does.
import { sql } from 'kysely';
import type { Db } from '../connect.ts';
import { leasesOfGrants, releaseLeasesOfGrants } from './account-leases.ts';

export interface GrantArtifact {
  /** What the grant owns, as the test names its check. */
  name: string;
  /**
   * The table that records the artifact with its grant (`grant_id`); null when nothing is stored per artifact. The
   * test matches these against the schema, so a new table that names a grant cannot be forgotten here.
   */
  table: string | null;
  /** How it ends (for the reader and the test's failure messages). */
  endsBy: string;
  /**
   * Ends the artifacts of `grantIds` in the revoking transaction, after the grants' own `revoked_at` is set. Absent
   * when that and the principals notification the revocation sends are the end of it.
   */
  end?: (trx: Db, grantIds: readonly string[], now: Date) => Promise<void>;
  /** How many artifacts of `grantIds` still work: 0 once they are revoked. Absent when only a request can tell. */
  live?: (db: Db, grantIds: readonly string[]) => Promise<number>;
}

/** The name of the open streams' entry (the walk checks that the app's open stream ends with credential_revoked). */
export const READINESS_STREAMS = 'readiness streams';

export const GRANT_ARTIFACTS: readonly GrantArtifact[] = [
  {
    name: 'access tokens',
    table: null, // JWTs, never stored: each names its grant (`sid`)
    endsBy:
      "the grant's revoked_at: every request reads the grant (server/auth/authenticate-general.ts), and the principals " +
      'notification of the revoking commit drops the kept principal in every process',
    live: (db, grantIds) =>
      count(
        db
          .selectFrom('oauth_grants')
          .select(COUNT)
          .where('id', 'in', grantIds)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow(),
      ),
  },
  {
    name: 'authorization codes',
    table: 'oauth_authorization_codes',
    endsBy: 'marked used: a later redemption is a replay, refused',
    end: async (trx, grantIds, now) => {
      await trx
        .updateTable('oauth_authorization_codes')
        .set({ used_at: now })
        .where('grant_id', 'in', grantIds)
        .where('used_at', 'is', null)
        .execute();
    },
    live: (db, grantIds) =>
      count(
        db
          .selectFrom('oauth_authorization_codes')
          .select(COUNT)
          .where('grant_id', 'in', grantIds)
          .where('used_at', 'is', null)
          .executeTakeFirstOrThrow(),
      ),
  },
  {
    name: 'refresh tokens',
    table: 'oauth_refresh_tokens',
    endsBy: 'revoked_at set: an unknown token from then on (400 invalid_grant)',
    end: async (trx, grantIds, now) => {
      await trx
        .updateTable('oauth_refresh_tokens')
        .set({ revoked_at: now })
        .where('grant_id', 'in', grantIds)
        .where('revoked_at', 'is', null)
        .execute();
    },
    live: (db, grantIds) =>
      count(
        db
          .selectFrom('oauth_refresh_tokens')
          .select(COUNT)
          .where('grant_id', 'in', grantIds)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow(),
      ),
  },
  {
    name: 'personal keys',
    table: 'api_keys',
    endsBy: 'revoked_at set (a key minted through a key inherits its grant), and the principals notification',
    end: async (trx, grantIds, now) => {
      await trx
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('grant_id', 'in', grantIds)
        .where('revoked_at', 'is', null)
        .execute();
    },
    live: (db, grantIds) =>
      count(
        db
          .selectFrom('api_keys')
          .select(COUNT)
          .where('grant_id', 'in', grantIds)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow(),
      ),
  },
  {
    name: 'webhook endpoints',
    table: 'webhook_endpoints',
    endsBy: 'deleted with their pending deliveries (cascade): no event of the student reaches them again',
    end: async (trx, grantIds) => {
      await trx.deleteFrom('webhook_endpoints').where('grant_id', 'in', grantIds).execute();
    },
    live: (db, grantIds) =>
      count(
        db.selectFrom('webhook_endpoints').select(COUNT).where('grant_id', 'in', grantIds).executeTakeFirstOrThrow(),
      ),
  },
  {
    name: 'calendar feeds',
    table: 'calendar_feeds',
    endsBy: 'revoked_at set: the feed URL answers 404 like an unknown one',
    end: async (trx, grantIds, now) => {
      await trx
        .updateTable('calendar_feeds')
        .set({ revoked_at: now })
        .where('grant_id', 'in', grantIds)
        .where('revoked_at', 'is', null)
        .execute();
    },
    live: (db, grantIds) =>
      count(
        db
          .selectFrom('calendar_feeds')
          .select(COUNT)
          .where('grant_id', 'in', grantIds)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow(),
      ),
  },
  {
    name: READINESS_STREAMS,
    table: 'account_leases',
    endsBy:
      'their places freed (rows deleted), and the principals notification of the revoking commit: every process ends ' +
      'its streams whose credential no longer stands with credential_revoked (services/leases/account-leases.ts); a process ' +
      'that misses the notification ends them at its next lease renewal, which finds their rows gone',
    end: async (trx, grantIds) => void (await releaseLeasesOfGrants(trx, grantIds)),
    live: leasesOfGrants,
  },
];

const COUNT = sql<string | number>`count(*)`.as('count');
const count = async (row: Promise<{ count: string | number }>): Promise<number> => Number((await row).count);
