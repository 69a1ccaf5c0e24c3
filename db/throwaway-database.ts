// A database created for one run of the tests or the benchmark on a PostgreSQL server, and dropped after it,
// so that nobody's own data is touched.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ThrowawayDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * `template`: a database on the same server to copy (CREATE DATABASE … TEMPLATE; nobody may be connected to it), e.g.
 * one already migrated, for runs that make many databases of the same start.
 */
export async function createThrowawayDatabase(
  serverUrl: string,
  namePrefix: string,
  options: { template?: string } = {},
): Promise<ThrowawayDatabase> {
  const name = `${namePrefix}_${randomBytes(6).toString('hex')}`;
  await run(serverUrl, `create database ${name}${options.template ? ` template ${options.template}` : ''}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(serverUrl, `drop database if exists ${name} with (force)`) };
}

async function run(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
