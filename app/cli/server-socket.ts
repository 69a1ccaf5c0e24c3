// The CLI while npm start runs on the embedded database. PGlite lets one process open a data directory, so the server
// listens on a Unix socket in it (mode 0600: whoever may read the database may use it) and runs the command lines it
// is sent in its own process, on its own database; `npm run cli` finding that socket sends its arguments there and
// prints what comes back, with the same exit code, as if it had run the command itself.
//
// The protocol is one JSON line each way per message: the CLI sends {"argv": [...], "debug": bool}; the server answers
// with {"stdout": text} and {"stderr": text} lines as the command writes, then {"exit": code} and closes.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Db } from '../../db/connect.ts';
import { opensNoDatabase, refusedInServer, runCommandLine } from './commands.ts';
import { runAt } from './shared.ts';

/** A command line is a few hundred bytes; anything far larger is not one. */
const MAX_REQUEST_BYTES = 64 * 1024;
/**
 * How long the CLI waits for a word from the server. The commands that run in it take a second or two (the long
 * ones, such as seed --scale, are refused there), so a minute of silence means a server that is stuck or stopped
 * (SIGSTOP, a debugger), and the operator is told so instead of waiting forever.
 */
export const SERVER_SILENCE_LIMIT_MS = 60_000;

export function cliSocketPath(dataDir: string): string {
  return join(dataDir, 'cli.sock');
}

export interface CliSocket {
  /** Stops taking command lines, waits for the one running, and removes the socket. */
  close(): Promise<void>;
}

/**
 * Listens on the data directory's socket. The caller holds the directory's lock, so a socket file already there was
 * left by a server that was killed: it is replaced. Command lines run one at a time, as they would one process after
 * another.
 */
export async function serveCliSocket(dataDir: string, db: Db, where: string): Promise<CliSocket> {
  const path = cliSocketPath(dataDir);
  rmSync(path, { force: true });
  let queue: Promise<unknown> = Promise.resolve();
  /** Connections that have not sent their command line yet: a stop does not wait for them. */
  const unread = new Set<Socket>();
  const server = createServer((socket) => {
    socket.on('error', () => {}); // a CLI that went away (Ctrl-C) takes its output with it
    unread.add(socket);
    readRequest(socket)
      .finally(() => unread.delete(socket))
      .then((request) => {
        const done = queue.then(() => answer(socket, request, db, where));
        queue = done.catch(() => {});
        return done;
      })
      .catch(() => socket.destroy());
  });
  // The socket is created with the mode the umask leaves, when listen() binds it (synchronously, on this thread):
  // owner read and write only, from the first moment.
  const umask = process.umask(0o177);
  try {
    server.listen(path);
  } finally {
    process.umask(umask);
  }
  await once(server, 'listening');
  return {
    async close() {
      // Closing the listener removes its socket file; it is done once every connection has ended.
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of unread) socket.destroy();
      await queue;
      await closed;
    },
  };
}

/** The first line the CLI sends. (Not read with for await: leaving that loop would destroy the socket.) */
function readRequest(socket: Socket): Promise<{ argv: string[]; debug: boolean }> {
  socket.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let received = '';
    const read = (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\n');
      if (end < 0) {
        if (received.length > MAX_REQUEST_BYTES) reject(new Error('no command line'));
        return;
      }
      socket.off('data', read);
      try {
        const request = JSON.parse(received.slice(0, end)) as { argv?: unknown; debug?: unknown };
        if (!Array.isArray(request.argv) || !request.argv.every((arg) => typeof arg === 'string'))
          throw new Error('no command line');
        resolve({ argv: request.argv, debug: request.debug === true });
      } catch (error) {
        reject(error);
      }
    };
    socket.on('data', read);
    socket.once('end', () => reject(new Error('no command line')));
  });
}

async function answer(
  socket: Socket,
  { argv, debug }: { argv: string[]; debug: boolean },
  db: Db,
  where: string,
): Promise<void> {
  const send = (message: object) => {
    if (socket.writable) socket.write(`${JSON.stringify(message)}\n`);
  };
  const refused = opensNoDatabase(argv) ? 'help and config check run in the CLI itself' : refusedInServer(argv);
  let exit = 1;
  if (refused) send({ stderr: `error: ${refused}\n` });
  else
    exit = await runAt(
      { stdout: (text) => send({ stdout: text }), stderr: (text) => send({ stderr: text }), server: { db, where } },
      () => runCommandLine(argv, { debug }),
    );
  send({ exit });
  socket.end();
}

/**
 * Runs `argv` in the server listening in `dataDir`, writing its output here; undefined when no server listens there
 * (none runs, or a killed one left its socket file behind): then the CLI opens the database itself.
 */
export async function runInServer(
  dataDir: string,
  argv: string[],
  debug: boolean,
  silenceLimitMs = SERVER_SILENCE_LIMIT_MS,
): Promise<number | undefined> {
  const socket = createConnection(cliSocketPath(dataDir));
  try {
    await once(socket, 'connect');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ECONNREFUSED') return undefined;
    throw new Error(`cannot reach the server running on ${dataDir}/: ${(error as Error).message}`, { cause: error });
  }
  let silent = false;
  // The reading below ends when the interface closes: a destroyed socket alone would never end it.
  const lines = createInterface({ input: socket, crlfDelay: Infinity });
  socket.setTimeout(silenceLimitMs, () => {
    silent = true;
    socket.destroy();
    lines.close();
  });
  socket.write(`${JSON.stringify({ argv, debug })}\n`);
  let exit: number | undefined;
  for await (const line of lines) {
    const message = JSON.parse(line) as { stdout?: string; stderr?: string; exit?: number };
    if (message.stdout !== undefined) process.stdout.write(message.stdout);
    if (message.stderr !== undefined) process.stderr.write(message.stderr);
    if (message.exit !== undefined) exit = message.exit;
  }
  if (silent)
    throw new Error(
      `the server running on ${dataDir}/ has not answered for ${silenceLimitMs / 1000} s; it may be stuck or stopped (the command may still run there)`,
    );
  if (exit === undefined) throw new Error('the running server stopped before the command finished; run it again');
  return exit;
}
