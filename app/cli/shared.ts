// What every CLI command needs: argument parsing that reports usage errors, a migrated database that is always
// closed afterwards, where its output goes, and the plain-text tables of the listings.
import { AsyncLocalStorage } from 'node:async_hooks';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Db, DbTarget } from '../../db/connect.ts';
import type { DatabaseTimeouts } from '../../db/database-timeouts.ts';

/** Wrong command line: the dispatcher prints it, prefixed with the command's name, with a hint to --help and exits with 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses `args` strictly: unknown options, missing values and unexpected positionals are usage errors. */
export function parse<const O extends Options>(args: string[], options: O, positionals: readonly string[] = []) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    // node:util reports every command-line problem as an ERR_PARSE_ARGS_* error; anything else is a bug.
    // Some of them span lines (a hint follows the problem); the dispatcher prints one error line.
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_'))
      throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '));
    throw error;
  }
  if (parsed.positionals.length > positionals.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.length])}`);
  const missing = positionals[parsed.positionals.length];
  if (missing !== undefined) throw new UsageError(`missing ${missing}`);
  return parsed;
}

/** A whole number from `min` to `max` given as an option value, or undefined when the option was not given. */
export function integerOption(option: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max))
    throw new UsageError(`${option} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return value;
}

/**
 * Where a command runs: its two output streams and, when the running server runs it (app/cli/server-socket.ts),
 * the server's own database, already migrated. Outside of one, a command prints to this process's stdout and stderr
 * and opens the database itself.
 */
export interface CommandSite {
  stdout(text: string): void;
  stderr(text: string): void;
  server?: { db: Db; where: string };
}

const site = new AsyncLocalStorage<CommandSite>();

/** Runs `command` with its output and database taken from `at`. */
export function runAt<T>(at: CommandSite, command: () => Promise<T>): Promise<T> {
  return site.run(at, command);
}

/** A line of the command's result on stdout (the one a script reads, e.g. a key as the last line). */
export function print(line: string): void {
  const at = site.getStore();
  if (at) at.stdout(`${line}\n`);
  else console.log(line);
}

/** What the command tells the person running it, on stderr. */
export function note(text: string): void {
  const at = site.getStore();
  if (at) at.stderr(text);
  else process.stderr.write(text);
}

/**
 * Opens the database the server would use (DATABASE_URL, else PGlite in DATA_DIR), migrates it, runs `use`
 * and closes it whatever happens. `applied` lists the migrations this call applied. Inside the running server,
 * `use` gets the server's database (migrated when it started) and it stays open.
 */
export async function withDb<T>(
  use: (db: Db, applied: string[]) => Promise<T>,
  timeouts?: DatabaseTimeouts,
): Promise<T> {
  const server = site.getStore()?.server;
  if (server) {
    note(`database: ${server.where}, through the server that has it open\n`);
    return use(server.db, []);
  }
  // Loaded here, not at the top: a command the running server runs for this process needs neither the drivers nor
  // the migrations, and loading them is most of a CLI call's time.
  const [{ loadConfig }, { assertDatabaseReachable, connect, describeTarget }, { migrateToLatest }] = await Promise.all(
    [import('../../app/config.ts'), import('../../db/connect.ts'), import('../../db/migrate.ts')],
  );
  const config = loadConfig();
  const where = safeDescribe(config.database, describeTarget);
  note(`database: ${where}\n`);
  const db = connect(config.database, { timeouts });
  try {
    await assertDatabaseReachable(db, config.database, timeouts?.connectMs);
    return await use(db, await migrateToLatest(db));
  } finally {
    await db.destroy();
  }
}

function safeDescribe(target: DbTarget, describeTarget: (target: DbTarget) => string): string {
  try {
    return describeTarget(target);
  } catch {
    // URL parsing failed; the value itself may hold a password, so it is not repeated.
    throw new Error('DATABASE_URL is not a valid URL (expected postgres://user:password@host:port/database)');
  }
}

/** Control characters in a name would break the table or drive the terminal. */
export function printable(text: string): string {
  // oxlint-disable-next-line no-control-regex -- matching control characters is this function's job
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

export function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows]
    .map((cells) =>
      cells
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
