// The service across hosts: two network namespaces on this machine, each with its own address and two processes of
// `npm start` (`--role web`, and `--role all`: serving and delivering webhooks), share one PostgreSQL through PgBouncer
// in transaction mode and one Redis. PgBouncer, started by this test, listens on the bridge's address. PostgreSQL and
// Redis listen on 127.0.0.1 only: Redis and the webhook receiver are reached at the bridge's address through TCP
// forwarders this test owns (a process each), and DATABASE_SESSION_URL (LISTEN, the start-up lock) is PostgreSQL's Unix
// socket, which every namespace shares: a forwarder there would add a process hop to each NOTIFY, and so to the lag
// measured here, that a real network does not have.
//
// Limits count once across hosts; a revocation and a plan change hold on every host once the commit's NOTIFY arrives
// (milliseconds after the change's response; the lag is printed); the leaderboard and /stats caches are dropped on
// every host; one host killed (kill -9, both processes) in the middle of a
// write load loses no acknowledged write and no webhook event, and the other host serves on.
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, type Db } from '../../db/connect.ts';
import { setPlan } from '../../db/queries/users.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../db/throwaway-database.ts';
import { issueApiKey } from '../../server/auth/api-keys.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { TEST_SECRETS_KEY } from '../support/server-process.ts';
import { insertEndpoint } from '../services/webhooks/fixtures.ts';
import { startReceiver, type Receiver } from '../services/webhooks/receiver.ts';
import { startPgBouncer, type PgBouncer } from '../faults/pgbouncer-process.ts';
import {
  expectStatus,
  heldEverywhere,
  minuteQuota,
  payPlus,
  PAYMENT_PROVIDER_SECRET,
  send,
  studentWithKey,
} from '../faults/pgbouncer-smoke.ts';
import { requiredEnv, ROOMY, until } from '../faults/support/fixture.ts';
import { createHosts, type Host, type Hosts } from './network.ts';

const root = new URL('../../', import.meta.url).pathname;
/** PostgreSQL's Unix socket: namespaces share the file system, so every host reaches it without a hop (see above). */
const POSTGRES_SOCKET_DIR = process.env.POSTGRES_SOCKET_DIR ?? '/var/run/postgresql';
const box = secretBox(Buffer.from(TEST_SECRETS_KEY, 'base64'));
const ROLES = [
  { role: 'web', port: 3000 },
  { role: 'all', port: 3001 },
] as const;

interface Running {
  host: Host;
  role: string;
  url: string;
  child: ChildProcess;
  output(): string;
}

describe('two hosts on one PostgreSQL (through PgBouncer) and one Redis', function () {
  this.timeout(150_000);
  const serverUrl = requiredEnv('DATABASE_URL');
  const redisUrl = new URL(requiredEnv('REDIS_URL'));
  let network: Hosts;
  let throwaway: ThrowawayDatabase;
  let bouncer: PgBouncer;
  let receiver: Receiver;
  let db: Db;
  let name: string;
  let processes: Running[] = [];
  let partnerKey: string;
  let contract: { id: string; key: string };

  const startProcess = (host: Host, role: string, port: number, env: NodeJS.ProcessEnv): Promise<Running> => {
    const child = network.spawnIn(host, process.execPath, ['app/start.mjs', '--role', role], {
      cwd: root,
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    return new Promise((resolve, reject) => {
      const poll = setInterval(() => {
        if (/listening on http:/.test(output)) {
          clearInterval(poll);
          resolve({ host, role, url: `http://${host.address}:${port}`, child, output: () => output });
        }
      }, 50);
      child.once(
        'exit',
        (code) => (
          clearInterval(poll),
          reject(new Error(`${host.name} --role ${role} exited with ${code}:\n${output}`))
        ),
      );
    });
  };
  before(async function () {
    this.timeout(120_000);
    // Built once here: four processes starting together would each rebuild dist/ after a source changed.
    execFileSync(process.execPath, ['app/start.mjs', '--build-only'], { cwd: root, stdio: 'ignore' });
    network = await createHosts(2);
    throwaway = await createThrowawayDatabase(serverUrl, 'sc_hosts');
    name = new URL(throwaway.url).pathname.slice(1);
    db = connect({ databaseUrl: throwaway.url });
    bouncer = await startPgBouncer({ serverUrl, listenAddress: network.gateway, poolSize: 8 });
    const redisPort = await network.forward(Number(redisUrl.port || 6379));
    receiver = await startReceiver();
    const receiverPort = await network.forward(Number(new URL(receiver.url).port));

    const session = new URL(throwaway.url);
    session.host = 'localhost';
    session.searchParams.set('host', POSTGRES_SOCKET_DIR);
    const env = {
      DATABASE_URL: bouncer.urlFor(name),
      DATABASE_POOLER: 'transaction',
      DATABASE_SESSION_URL: session.toString(),
      REDIS_URL: `redis://${network.gateway}:${redisPort}`,
      REDIS_KEY_PREFIX: `sc-hosts-${randomUUID().slice(0, 8)}:`,
      PUBLIC_URL: 'http://api.hosts.test',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PAYMENT_PROVIDER_SECRET,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_SCALE: '0.001',
      WEBHOOK_POLL_MS: '500',
      SHUTDOWN_DRAIN_SECONDS: '0',
    };
    processes = await Promise.all(
      network.hosts.flatMap((host) => ROLES.map(({ role, port }) => startProcess(host, role, port, env))),
    );
    assert.equal(
      processes.filter((p) => p.output().includes('"msg":"migrated"')).length,
      1,
      'one process of one host migrated',
    );

    partnerKey = (await issueApiKey(db, { name: 'hosts suite', per_minute: ROOMY, per_day: ROOMY })).key;
    contract = await studentWithKey(db, 'contract');
    await setPlan(
      db,
      contract.id,
      { plan: 'contract', contract_per_minute: ROOMY, contract_per_day: ROOMY, contract_ai_per_hour: ROOMY },
      new Date(),
    );
    const endpoint = await insertEndpoint(
      db,
      box,
      { user_id: contract.id },
      { url: `http://${network.gateway}:${receiverPort}/hooks`, event_types: ['task.created'] },
    );
    receiver.secrets.push(endpoint.secret);
  });
  after(async () => {
    network?.destroy();
    await receiver?.close();
    await db?.destroy();
    await bouncer?.stop();
    await throwaway?.drop();
  });

  it('serves from every process of every host, through PgBouncer', async () => {
    const before = await bouncer.transactions(name);
    for (const p of processes)
      await expectStatus(send(p.url, contract.key, 'GET', '/api/today/loop'), 200, `${p.host.name} --role ${p.role}`);
    assert.ok((await bouncer.transactions(name)) > before, 'their statements went through the pooler');
  });

  it('counts a limit once across hosts', async () => {
    const free = await studentWithKey(db, 'free');
    const statuses: number[] = [];
    for (let i = 0; i < 64; i++)
      statuses.push((await send(processes[i % processes.length]!.url, free.key, 'GET', '/api/users/me')).status);
    assert.deepEqual(
      statuses,
      [...Array(60).fill(200), ...Array(4).fill(429)],
      'the free plan allows 60 a minute, wherever they are sent',
    );
  });

  it("holds a revocation and a plan change on every host as the commit's NOTIFY arrives (milliseconds)", async () => {
    const student = await studentWithKey(db, 'revoked');
    const made = await expectStatus(
      send(processes[0]!.url, student.key, 'POST', '/api/users/me/api-keys', {
        name: 'revoked on host 1',
        scopes: ['tasks:read'],
      }),
      201,
      'a key',
    );
    for (const p of processes)
      await expectStatus(send(p.url, made.key, 'GET', '/api/tasks'), 200, `the new key on ${p.host.name}`);
    await expectStatus(
      send(processes[0]!.url, student.key, 'DELETE', `/api/users/me/api-keys/${made.id}`),
      204,
      'revoke it on host 1',
    );
    const everywhere = [...processes].reverse().map((p) => p.url);
    const revoked = await heldEverywhere(
      everywhere,
      async (url) => (await send(url, made.key, 'GET', '/api/tasks')).status === 401,
    );

    // A payment through host 1 moves the student from the free plan (60 a minute) to plus (600).
    for (const p of processes) assert.equal(await minuteQuota(p.url, student.key), '60');
    await payPlus(processes[0]!.url, student.email);
    const planned = await heldEverywhere(everywhere, async (url) => (await minuteQuota(url, student.key)) === '600');
    console.log(`      on every host: revocation ${revoked}; plan ${planned}`);
  });

  it('drops the leaderboard and /stats caches on every host', async () => {
    const leader = async (p: Running) =>
      (await expectStatus(send(p.url, partnerKey, 'GET', '/api/v1/leaderboards/global'), 200, 'leaderboard'))[0]?.xp;
    const decks = async (p: Running) =>
      (await expectStatus(send(p.url, partnerKey, 'GET', '/api/v1/stats'), 200, 'stats')).flashcard_decks as number;
    const counted = await decks(processes[0]!);
    for (const p of processes) {
      await leader(p);
      assert.equal(await decks(p), counted);
    }
    await db.updateTable('users').set({ xp: 10_000_000 }).where('id', '=', contract.id).execute();
    await expectStatus(
      send(processes[3]!.url, contract.key, 'POST', '/api/flashcards/decks', { title: 'counted on every host' }),
      201,
      'a deck on host 2',
    );
    const dropped = await heldEverywhere(
      processes.map((p) => p.url),
      async (url) => {
        const p = processes.find((q) => q.url === url)!;
        return (await leader(p)) === 10_000_000 && (await decks(p)) === counted + 1;
      },
    );
    console.log(`      on every host: leaderboard and /stats ${dropped}`);
  });

  it('loses no acknowledged write and no webhook event when one host is killed mid-load; the other serves on', async () => {
    const [hostOne, hostTwo] = network.hosts;
    const acknowledged: string[] = [];
    const afterKill: Array<{ host: string; ok: boolean }> = [];
    let killedAt = Infinity;
    const stopAt = Date.now() + 5_000;
    const client = async (n: number) => {
      for (let i = 0; Date.now() < stopAt; i++) {
        const p = processes[(n + i) % processes.length]!;
        const startedAt = Date.now();
        const reply = await send(p.url, contract.key, 'POST', '/api/tasks', {
          title: `load ${n}.${i}`,
          due_at: '2030-06-01T09:00:00Z',
          course: 'Hosts',
        }).catch(() => undefined);
        if (reply?.status === 201) acknowledged.push(reply.body.id);
        if (startedAt > killedAt) afterKill.push({ host: p.host.name, ok: reply?.status === 201 });
        if (!reply) await new Promise((resolve) => setTimeout(resolve, 50)); // a dead host refuses at once
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const killed = processes.filter((p) => p.host === hostOne);
    const gone = killed.map((p) => new Promise((resolve) => p.child.once('exit', (_code, signal) => resolve(signal))));
    for (const p of killed) p.child.kill('SIGKILL');
    killedAt = Date.now();
    assert.deepEqual(await Promise.all(gone), ['SIGKILL', 'SIGKILL'], 'both processes of host 1 died');
    await load;

    const served = afterKill.filter((r) => r.host === hostTwo!.name);
    assert.ok(
      served.length > 10 && served.every((r) => r.ok),
      `after the kill host 2 answered ${served.filter((r) => r.ok).length} of ${served.length}`,
    );
    assert.ok(acknowledged.length > 20, `acknowledged writes: ${acknowledged.length}`);
    const stored = await db.selectFrom('tasks').select('id').where('id', 'in', acknowledged).execute();
    assert.equal(stored.length, acknowledged.length, 'every acknowledged task is stored');

    // Host 2's worker delivers every event, those host 1's worker held when it died among them (once their lease ends).
    const eventsOf = async () => {
      const rows = await db
        .selectFrom('events')
        .select(['id', 'data'])
        .where('type', '=', 'task.created')
        .where('user_id', '=', contract.id)
        .execute();
      return rows
        .filter((row) => acknowledged.includes((row.data as { object: { id: string } }).object.id))
        .map((row) => row.id);
    };
    const events = await eventsOf();
    assert.equal(events.length, acknowledged.length, 'an event for every acknowledged write');
    await until(
      async () => events.every((id) => receiver.received.some((r) => r.webhookId === id && r.status !== 'hang')),
      60_000,
      'every event delivered',
    );
    assert.ok(receiver.received.every((r) => r.verifiedWith === 0));
    console.log(
      `      ${acknowledged.length} writes acknowledged (${served.length} by host 2 after the kill), all stored; ${events.length} events, all delivered`,
    );
  });
});
