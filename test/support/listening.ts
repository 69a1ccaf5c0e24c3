// The real app listening on a free port of 127.0.0.1, for tests that call it over the network (the SDK, a client
// that disconnects mid-stream, the docs in a browser).
import { createServer, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerClientErrors } from '../../server/http/client-errors.ts';
import { buildApp } from './partner-app.ts';

type App = Awaited<ReturnType<typeof buildApp>>;

export interface Listening {
  baseUrl: string;
  /** Closes the server, open connections (a stream, a keep-alive) included. */
  close: () => Promise<void>;
}

/** `options`: the listener's own (server/http/request-timeout.ts); absent: Node's defaults. Refusals of Node's parser
 * are answered as the service's listener answers them (server/http/client-errors.ts). */
export async function listen(app: App, options: ServerOptions = {}): Promise<Listening> {
  const server = answerClientErrors(createServer(options, app)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export async function listeningApp(
  options: Parameters<typeof buildApp>[0] = {},
  listener: ServerOptions = {},
): Promise<Listening & { app: App }> {
  const app = await buildApp(options);
  return { app, ...(await listen(app, listener)) };
}

/**
 * For clients that keep connections alive (fetch's undici): the listener keeps an idle connection longer than the
 * client does, so that the client always gives it up first. At Node's 5 s a client could send its next request on a
 * connection the listener was closing: `fetch failed` (seen once in the SDK's event-feed test, on a loaded machine).
 */
export const OUTLASTING_KEEP_ALIVE: ServerOptions = { keepAliveTimeout: 65_000 };
