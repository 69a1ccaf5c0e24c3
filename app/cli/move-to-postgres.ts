// db move-to-postgres --to URL: moves an embedded deployment (PGlite in DATA_DIR) to an empty PostgreSQL database,
// all of it: every table's rows (db/copy-database.ts: accounts, API keys, OAuth grants and refresh tokens, webhook
// endpoints, deliveries and their pending attempts in the job queue, xp, tasks, cards, the changes feed), and what
// the embedded deployment keeps beside its database: the JWT signing keys of DATA_DIR/signing-keys.json go into the
// signing_keys table, sealed under the secrets key, so access tokens already issued keep verifying. The secrets key
// itself cannot move into the database it opens: the operator sets SECRETS_KEY to it, which this command prints
// when it came from DATA_DIR's key file. Accounts over a per-account bound are moved as they are and listed
// (over-bounds.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { secretsKeyFor } from '../secrets-key.ts';
import { assertDatabaseReachable, connect, describeTarget, type Db } from '../../db/connect.ts';
import { copyDatabase, CopyRefused, tablesWithData } from '../../db/copy-database.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { insertSigningKeys } from '../../db/queries/signing-keys.ts';
import { listSealedEndpointSecrets } from '../../db/queries/webhooks.ts';
import { BULK_TIMEOUTS } from '../../db/seed/scale.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { databaseSigningKeyStore, fileSigningKeyStore, sealedSigningKey } from '../../server/auth/signing-key-store.ts';
import { openEndpointSecret } from '../../services/webhooks/secrets.ts';
import { overBoundLines } from './over-bounds.ts';
import { note, parse, print, UsageError } from './shared.ts';

export async function moveToPostgres(args: string[]): Promise<void> {
  const { values } = parse(args, { to: { type: 'string' } });
  const targetUrl = postgresUrl(values.to);
  const config = loadConfig();
  if (!('dataDir' in config.database)) {
    throw new UsageError(
      'DATABASE_URL is set; this command moves the embedded database of DATA_DIR: unset DATABASE_URL and name the PostgreSQL database with --to',
    );
  }
  const { dataDir } = config.database;
  if (dataDir.startsWith('memory://'))
    throw new UsageError(`DATA_DIR=${dataDir} is in memory: there is nothing to move`);
  if (!existsSync(join(dataDir, 'PG_VERSION')))
    throw new Error(`there is no embedded database in ${dataDir}/ (DATA_DIR)`);
  // The key the server on this directory seals with: SECRETS_KEY when set, else the key file it made in DATA_DIR.
  const secretsKey = secretsKeyFor(config);
  const target = { databaseUrl: targetUrl };
  const where = describeTarget(target);
  const started = performance.now();

  // Opening the directory takes its lock: a server still running on it (or another command) makes this fail here.
  const source = connect(config.database);
  const destination = connect(target, { timeouts: BULK_TIMEOUTS });
  try {
    await assertDatabaseReachable(destination, target, BULK_TIMEOUTS.connectMs);
    const filled = await tablesWithData(destination);
    if (filled.length > 0) {
      const shown = filled.slice(0, 3).map((t) => `${t.name}: ${t.rows} rows`);
      if (filled.length > shown.length) shown.push(`${filled.length - shown.length} more tables`);
      throw new CopyRefused(`${where} is not empty (${shown.join(', ')}); move into a new, empty database`);
    }
    note(`from: embedded PGlite in ${dataDir}/\nto:   ${where}\n`);
    await migrateToLatest(source);
    await assertKeyOpensSecrets(
      source,
      secretsKey,
      config.secretsKey ? 'SECRETS_KEY' : `the key in ${join(dataDir, 'secrets.key')}`,
    );
    // Only the keys the embedded server signs with: with JWT_PRIVATE_KEY it signs with that alone, on PostgreSQL too.
    const signingKeys = config.jwtPrivateKey ? [] : await fileSigningKeyStore(dataDir).list(new Date(0));
    note(`migrating ${where}\n`);
    await migrateToLatest(destination);
    const copied = await copyDatabase(source, destination, {
      onTable: (name, rows) => {
        if (rows) note(`  ${name}: ${rows} rows\n`);
      },
      beforeCommit: (trx) =>
        insertSigningKeys(
          trx,
          signingKeys.map((key) => sealedSigningKey(secretsKey, key)),
        ),
    });
    const rows = copied.reduce((sum, table) => sum + table.rows, 0);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const keys = `${signingKeys.length} signing key${signingKeys.length === 1 ? '' : 's'}`;
    print(`moved ${rows} rows in ${copied.length} tables and ${keys} to ${where} in ${seconds} s`);
    const over = await overBoundLines(destination);
    if (over.length > 0) {
      print(`moved as they are, over a per-account bound (they can gain no more until under it):\n${over.join('\n')}`);
    }
  } finally {
    await Promise.all([source.destroy(), destination.destroy()]);
  }
  note(
    `start the service with DATABASE_URL set to that database and SECRETS_KEY to the key below; keep ${dataDir}/ until it answers as before\n`,
  );
  // The key was only in the data directory: print it (the last line, as the CLI prints every secret it makes).
  if (!config.secretsKey) print(`SECRETS_KEY=${secretsKey.toString('base64')}`);
}

function postgresUrl(raw: string | undefined): string {
  if (raw === undefined)
    throw new UsageError(
      '--to is required: the empty PostgreSQL database, postgres://user:password@host:port/database',
    );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError('--to is not a URL (expected postgres://user:password@host:port/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new UsageError(`--to must be a postgres:// URL, got ${url.protocol}`);
  return raw;
}

/**
 * Every secret sealed in the source must open with the key the PostgreSQL deployment will use, or its webhooks would
 * stop signing and its stored signing keys would stop loading: found now, before anything is written.
 */
async function assertKeyOpensSecrets(db: Db, secretsKey: Buffer, keyName: string): Promise<void> {
  const box = secretBox(secretsKey);
  try {
    for (const endpoint of await listSealedEndpointSecrets(db)) {
      openEndpointSecret(box, endpoint.id, endpoint.secret_sealed);
      if (endpoint.previous_secret_sealed) openEndpointSecret(box, endpoint.id, endpoint.previous_secret_sealed);
    }
    await databaseSigningKeyStore(db, secretsKey).list(new Date(0));
  } catch (error) {
    throw new Error(
      `${keyName} does not open the secrets stored in the embedded database: run this with the SECRETS_KEY the server runs with (${(error as Error).message})`,
      { cause: error },
    );
  }
}
