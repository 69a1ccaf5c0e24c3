// The settings for PostgreSQL behind a transaction-mode pooler (PgBouncer): what is sent through it, what bypasses it.
import assert from 'node:assert/strict';
import { loadConfig } from '../../app/config.ts';
import { ConfigError } from '../../server/process/config-error.ts';

describe('loadConfig: PostgreSQL behind a transaction pooler', () => {
  const pooled = 'postgres://app@pgbouncer:6432/app';
  const direct = 'postgres://app@db:5432/app';

  it('connects directly with named prepared statements by default, LISTEN and the start-up lock on DATABASE_URL', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: direct }).database, {
      databaseUrl: direct,
      transactionPooler: false,
      preparedStatements: true,
    });
  });

  it('behind DATABASE_POOLER=transaction: prepared statements off unless asked for, and a session URL required', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: pooled, DATABASE_POOLER: 'transaction' }),
      (e) => e instanceof ConfigError && /^DATABASE_POOLER=transaction needs DATABASE_SESSION_URL/.test(e.message),
    );
    assert.deepEqual(
      loadConfig({ DATABASE_URL: pooled, DATABASE_POOLER: 'transaction', DATABASE_SESSION_URL: direct }).database,
      {
        databaseUrl: pooled,
        sessionUrl: direct,
        transactionPooler: true,
        preparedStatements: false,
      },
    );
    // PgBouncer >= 1.21 with max_prepared_statements keeps them per client.
    assert.equal(
      (
        loadConfig({
          DATABASE_URL: pooled,
          DATABASE_POOLER: 'transaction',
          DATABASE_SESSION_URL: direct,
          DATABASE_PREPARED_STATEMENTS: 'on',
        }).database as { preparedStatements: boolean }
      ).preparedStatements,
      true,
    );
    assert.equal(
      (
        loadConfig({ DATABASE_URL: direct, DATABASE_PREPARED_STATEMENTS: 'off' }).database as {
          preparedStatements: boolean;
        }
      ).preparedStatements,
      false,
    );
  });

  it('refuses values it does not know', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: direct, DATABASE_POOLER: 'session' }),
      /DATABASE_POOLER must be one of none, transaction, got "session"/,
    );
    assert.throws(
      () => loadConfig({ DATABASE_URL: direct, DATABASE_PREPARED_STATEMENTS: 'yes' }),
      /DATABASE_PREPARED_STATEMENTS must be on or off, got "yes"/,
    );
  });
});
