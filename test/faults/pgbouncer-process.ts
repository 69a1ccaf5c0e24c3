// A real PgBouncer (the distribution's package: `.ci/run` installs it) in transaction mode in front of the PostgreSQL
// of DATABASE_URL, started from a generated ini on a free port, for the tests of the service behind a pooler. Its
// admin console (SHOW STATS) tells a test that the traffic went through it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const BINARIES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'];
/** PgBouncer refuses to run as root; `-u` drops to this user (the PostgreSQL package's). */
const UNPRIVILEGED_USER = 'postgres';

export interface PgBouncer {
  /** DATABASE_URL through the pooler, for the database `name`. */
  urlFor(database: string): string;
  /** Transactions the pooler passed to the server for `database`, from its admin console. */
  transactions(database: string): Promise<number>;
  output(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The PostgreSQL behind it (postgres://user@host:port/…); the pooler connects as the URL's user, trusted. */
  serverUrl: string;
  /** Where it listens (default 127.0.0.1). */
  listenAddress?: string;
  /** Server connections per database and user. */
  poolSize?: number;
  /** Extra [databases] lines, e.g. an alias in session mode: `name = host=… dbname=… pool_mode=session`. */
  databases?: string[];
  /** The statement_timeout its server connections get (connect_query), null for none; default 10 s. */
  statementTimeoutMs?: number | null;
  /** Extra [pgbouncer] settings, e.g. `max_prepared_statements = 200`. */
  settings?: string[];
}

export function pgbouncerBinary(): string {
  const binary = BINARIES.find((path) => existsSync(path));
  if (!binary)
    throw new Error('PgBouncer is not installed (Debian: apt-get install -y pgbouncer; .ci/run installs it)');
  return binary;
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const listenAddress = options.listenAddress ?? '127.0.0.1';
  const port = await freePort(listenAddress);
  const dir = mkdtempSync(join(tmpdir(), 'sc-pgbouncer-'));
  chmodSync(dir, 0o755);
  const asRoot = userInfo().uid === 0;
  // The statement bound the service cannot send through the pooler (db/connect.ts) is set on each server connection.
  const statementTimeoutMs = options.statementTimeoutMs === undefined ? 10_000 : options.statementTimeoutMs;
  const serverAddress = `host=${server.hostname} port=${server.port || 5432}${statementTimeoutMs === null ? '' : ` connect_query='SET statement_timeout = ${statementTimeoutMs}'`}`;
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      ...(options.databases ?? []),
      `* = ${serverAddress}`,
      '[pgbouncer]',
      `listen_addr = ${listenAddress}`,
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 10}`,
      'max_client_conn = 500',
      // The pooler must not hide a server that went away behind its own waits.
      'server_login_retry = 1',
      'query_wait_timeout = 30',
      ...(options.settings ?? []),
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  if (asRoot) chownSync(dir, ...ownerOf(UNPRIVILEGED_USER));
  const child = spawn(binary, [...(asRoot ? ['-u', UNPRIVILEGED_USER] : []), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForListening(child, () => output, exited);
  const urlFor = (database: string) => `postgres://${encodeURIComponent(user)}@${listenAddress}:${port}/${database}`;
  return {
    urlFor,
    output: () => output,
    async transactions(database) {
      const admin = new pg.Client({ connectionString: urlFor('pgbouncer') });
      await admin.connect();
      try {
        const { rows } = await admin.query('SHOW STATS');
        return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
      } finally {
        await admin.end();
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForListening(child: ChildProcess, output: () => string, exited: Promise<void>): Promise<void> {
  const deadline = Date.now() + 10_000;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!/listening on/.test(output())) {
    if (gone || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`PgBouncer did not start:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A port free on `address` now (PgBouncer takes it a moment later; nothing else here binds ports at random). */
async function freePort(address: string): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, address, resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function ownerOf(name: string): [number, number] {
  return [
    Number(execFileSync('id', ['-u', name], { encoding: 'utf8' })),
    Number(execFileSync('id', ['-g', name], { encoding: 'utf8' })),
  ];
}
