// The real app listening on a free port of 127.0.0.1, for tests that call it over the network (the SDK).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../support/partner-app.ts';

export async function listeningApp(options: Parameters<typeof buildApp>[0] = {}): Promise<{ app: Awaited<ReturnType<typeof buildApp>>; baseUrl: string; close: () => Promise<void> }> {
  const app = await buildApp(options);
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    app,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
