// A TCP proxy a test owns, put between the service and a real dependency (Redis, PostgreSQL) so that the test can
// take the dependency away and bring it back without touching the shared server other engineers' tests use.
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';

export interface TcpProxy {
  /** The local port clients connect to (stable across stop/start). */
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** As if the dependency died: every open connection is reset and new ones are refused. */
  stop(): Promise<void>;
  /** The dependency is back: connections are accepted and forwarded again, on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;

  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const listening = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        track(client);
        track(upstream);
        client.pipe(upstream);
        upstream.pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        port = (listening.address() as net.AddressInfo).port;
        server = listening;
        resolve();
      });
    });

  const stop = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.resetAndDestroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    urlFor(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    stop,
    start: async () => {
      if (!server) await listen();
    },
    close: stop,
  };
}

const portRange = '/proc/sys/net/ipv4/ip_local_port_range'; // Linux; elsewhere IANA's range starts higher still

/**
 * A local port nothing listens on: a dependency that is not there. It is taken below the kernel's ephemeral range
 * (bound, then released), because a port from that range can be handed out again to any outgoing connection, and a
 * client connecting to 127.0.0.1 on such a port can even be connected to itself (TCP simultaneous open): CI saw
 * "Socket closed unexpectedly" where the refusal was expected.
 */
export async function closedPort(): Promise<number> {
  const firstEphemeral = existsSync(portRange) ? Number(readFileSync(portRange, 'utf8').trim().split(/\s+/)[0]) : 32768;
  for (;;) {
    const port = 1024 + Math.floor(Math.random() * (firstEphemeral - 1024));
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
}
