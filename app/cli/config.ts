// config check: validates the environment as `npm start` reads it and prints each declared variable's resolved value
// (app/config-variables.ts), secrets masked, without opening the database. Exit 1 with the one-line reason when a
// setting is invalid. An embedded data directory that other users can reach is reported as a finding.
import type { DbTarget } from '../../db/connect.ts';
import { reachableEntries } from '../../db/private-files.ts';
import { signingKeySource } from '../../server/auth/signing-key-store.ts';
import { configFrom } from '../config.ts';
import { CONFIG_VARIABLES } from '../config-variables.ts';
import { readVariables } from '../env-variables.ts';
import { parse } from './shared.ts';

const SIGNING_KEYS = {
  JWT_PRIVATE_KEY: 'JWT_PRIVATE_KEY alone',
  DATA_DIR: 'a file in DATA_DIR',
  database: 'the database, encrypted with SECRETS_KEY',
};

export async function check(args: string[]): Promise<void> {
  parse(args, {});
  const env = process.env;
  const values = readVariables(CONFIG_VARIABLES, env);
  const config = configFrom(values);
  const rows: Array<[string, string]> = Object.entries(CONFIG_VARIABLES).map(([name, variable]) => [
    name,
    variable.show(values[name as keyof typeof values] as never, env),
  ]);
  rows.push(['signing keys', SIGNING_KEYS[signingKeySource(config)]]);
  const files = dataFiles(config.database);
  if (files) rows.push(['data files', files.state]);
  const width = Math.max(...rows.map(([name]) => name.length));
  console.log(rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n'));
  if (files?.finding) process.stderr.write(`finding: ${files.finding}\n`);
  process.stderr.write('configuration is valid\n');
}

/** Who can reach the embedded database's files (the data, its keys, the CLI's socket); undefined for PostgreSQL. */
function dataFiles(database: DbTarget): { state: string; finding?: string } | undefined {
  if (!('dataDir' in database) || database.dataDir.startsWith('memory://')) return undefined;
  const { dataDir } = database;
  const { reachable, entries } = reachableEntries(dataDir);
  if (entries === 0) return { state: 'not created yet (the first start makes it owner-only)' };
  if (reachable.length === 0) return { state: 'owner only' };
  const first = reachable[0]!;
  return {
    state: `${reachable.length} of ${entries} entries other users can reach`,
    finding:
      `other users can read or write ${reachable.length} files and directories of the embedded database ` +
      `in ${dataDir}/ ` +
      `(e.g. ${first.path}, mode ${first.mode.toString(8).padStart(4, '0')}): the next start makes them owner-only, ` +
      `or run chmod -R go-rwx ${dataDir}`,
  };
}
