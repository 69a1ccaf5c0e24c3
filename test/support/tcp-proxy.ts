// A TCP proxy a test owns, put between the service and a real dependency (Redis, PostgreSQL) so that the test can
// take the dependency away and bring it back without touching the shared server other engineers' tests use.
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

/** A local port nothing listens on (bound, then released): a dependency that is not there. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
