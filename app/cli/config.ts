// config check: validates the environment as `npm start` reads it and prints each declared variable's resolved value
// (app/config-variables.ts), secrets masked, without opening the database. Exit 1 with the one-line reason when a
// setting is invalid.
import { signingKeySource } from '../../server/auth/signing-key-store.ts';
import { configFrom } from '../config.ts';
import { CONFIG_VARIABLES } from '../config-variables.ts';
import { readVariables } from '../env-variables.ts';
import { parse } from './shared.ts';

const SIGNING_KEYS = { JWT_PRIVATE_KEY: 'JWT_PRIVATE_KEY alone', DATA_DIR: 'a file in DATA_DIR', database: 'the database, encrypted with SECRETS_KEY' };

export async function check(args: string[]): Promise<void> {
  parse(args, {});
  const env = process.env;
  const values = readVariables(CONFIG_VARIABLES, env);
  const config = configFrom(values);
  const rows: Array<[string, string]> = Object.entries(CONFIG_VARIABLES).map(([name, variable]) => [name, variable.show(values[name as keyof typeof values] as never, env)]);
  rows.push(['signing keys', SIGNING_KEYS[signingKeySource(config)]]);
  const width = Math.max(...rows.map(([name]) => name.length));
  console.log(rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n'));
  process.stderr.write('configuration is valid\n');
}
