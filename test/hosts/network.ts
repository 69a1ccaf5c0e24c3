// Hosts on this machine: each a network namespace with an address of its own on a bridge in the root namespace, where
// the shared services are reached at the bridge's address. Needs root (CAP_NET_ADMIN) and iproute2. Everything made
// here is removed by `destroy`, and also when the test process exits or is stopped by a signal (a CI timeout), so
// that a failed run leaves no namespace, link or process behind.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export interface Host {
  name: string;
  /** The namespace. */
  namespace: string;
  address: string;
}

export interface Hosts {
  /** The root namespace's address on the bridge: where the hosts reach PostgreSQL, PgBouncer, Redis and receivers. */
  gateway: string;
  hosts: Host[];
  /** Runs `command` inside `host`'s namespace (`ip netns exec`, which execs: the child's pid is the command's). */
  spawnIn(host: Host, command: string, args: string[], options: Parameters<typeof spawn>[2]): ChildProcess;
  /** Makes `127.0.0.1:targetPort` of the root namespace reachable from the hosts at gateway:returned port. */
  forward(targetPort: number): Promise<number>;
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export async function createHosts(count: number): Promise<Hosts> {
  // Interface names are at most 15 characters; the pid keeps two runs on one machine apart.
  const tag = (process.pid % 46_656).toString(36);
  const subnet = `10.231.${process.pid % 250}`;
  const bridge = `scbr${tag}`;
  const gateway = `${subnet}.1`;
  const hosts: Host[] = Array.from({ length: count }, (_, i) => ({
    name: `host-${i + 1}`,
    namespace: `sc-host-${tag}-${i + 1}`,
    address: `${subnet}.${11 + i}`,
  }));
  const children = new Set<ChildProcess>();
  let destroyed = false;

  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const host of hosts) quietly(() => ip('netns', 'delete', host.namespace));
    quietly(() => ip('link', 'delete', bridge));
    process.off('exit', destroy);
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    destroy();
    process.kill(process.pid, signal);
  };
  process.on('exit', destroy);
  for (const signal of SIGNALS) process.once(signal, onSignal);

  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${gateway}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (const [i, host] of hosts.entries()) {
      const outside = `scv${tag}h${i + 1}`;
      const inside = `scp${tag}h${i + 1}`;
      ip('netns', 'add', host.namespace);
      ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
      ip('link', 'set', inside, 'netns', host.namespace);
      ip('link', 'set', outside, 'master', bridge, 'up');
      ip('-n', host.namespace, 'link', 'set', 'lo', 'up');
      ip('-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', inside);
      ip('-n', host.namespace, 'link', 'set', inside, 'up');
    }
  } catch (error) {
    destroy();
    throw new Error(
      `could not make the hosts' network (root and iproute2 needed): ${(error as { stderr?: Buffer }).stderr?.toString() ?? String(error)}`,
      { cause: error },
    );
  }

  return {
    gateway,
    hosts,
    spawnIn(host, command, args, options) {
      const child = spawn('ip', ['netns', 'exec', host.namespace, command, ...args], options);
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    async forward(targetPort) {
      // A process of its own: in this one, the test's own requests would queue the forwarded bytes (a commit's
      // NOTIFY among them) behind its event loop's other work.
      const child = spawn(process.execPath, ['-e', FORWARDER, gateway, String(targetPort)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return new Promise<number>((resolve, reject) => {
        child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
        child.once('exit', (code) => reject(new Error(`the forwarder to port ${targetPort} exited with ${code}`)));
      });
    },
    destroy,
  };
}

/** Listens on argv[1] (a free port, printed) and pipes each connection to 127.0.0.1:argv[2]. */
const FORWARDER = `
const net = require('node:net');
const [host, target] = process.argv.slice(1);
const server = net.createServer((incoming) => {
  const outgoing = net.createConnection({ host: '127.0.0.1', port: Number(target) });
  const close = () => (incoming.destroy(), outgoing.destroy());
  incoming.on('error', close).on('close', close);
  outgoing.on('error', close).on('close', close);
  incoming.pipe(outgoing).pipe(incoming);
});
server.listen(0, host, () => console.log(server.address().port));
`;

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

function quietly(run: () => void): void {
  try {
    run();
  } catch {
    // already gone
  }
}
