// The readiness stream across two real server processes on one PostgreSQL database: a task completed through
// process A reaches a stream held by process B (NOTIFY on commit, B's LISTEN connection), and a
// stream that B ends when it stops resumes on A with Last-Event-ID, with the move made meanwhile.
import assert from 'node:assert/strict';
import { openEventStream, type LiveEventStream } from '../support/sse.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { faultDatabase, requiredEnv, type FaultDatabase } from './support/fixture.ts';

const STREAM = '/api/exams/readiness/stream';
// A change reaches the other process's stream in milliseconds (the run prints how many); the deadline is generous
// for a machine doing twice its work, so that a loaded CI host cannot fail a path that works.
const EVENT_WITHIN_MS = 10_000;

describe('the readiness stream across two processes', function () {
  this.timeout(90_000);
  const redisUrl = requiredEnv('REDIS_URL');
  let database: FaultDatabase;
  const processes: ServerProcess[] = [];
  const streams: LiveEventStream[] = [];

  before(async () => {
    database = await faultDatabase('sc_fault_readiness');
  });
  after(async () => {
    streams.forEach((stream) => stream.close());
    for (const server of processes) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await database?.drop();
  });

  const start = () => {
    const server = startServerProcess({
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      SHUTDOWN_DRAIN_SECONDS: '0',
      SHUTDOWN_GRACE_SECONDS: '10',
    });
    processes.push(server);
    return server;
  };
  const headers = () => ({ 'X-Service-API-Key': database.studentKey, 'Content-Type': 'application/json' });
  async function post(base: string, path: string, body: unknown, method = 'POST') {
    const res = await fetch(base + path, {
      method,
      headers: headers(),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
    return (await res.json()) as any;
  }
  async function open(base: string, extra: Record<string, string> = {}) {
    const stream = await openEventStream(base + STREAM, { 'X-Service-API-Key': database.studentKey, ...extra });
    streams.push(stream);
    assert.equal(stream.status, 200);
    return stream;
  }

  it('carries a task completed through process A to a stream on process B, and resumes on A after B stops', async () => {
    const [a, b] = [start(), start()];
    const [baseA, baseB] = await Promise.all([a.listening, b.listening]);
    const examDate = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    const tasks = [];
    for (const title of ['Past paper 1', 'Past paper 2'])
      tasks.push(await post(baseA, '/api/tasks', { title, due_at: `${examDate}T09:00:00Z`, course: 'Chemistry' }));
    const exam = await post(baseA, '/api/exams', {
      subject: 'Chemistry',
      exam_date: examDate,
      task_ids: tasks.map((t) => t.id),
    });

    const onB = await open(baseB);
    const snapshot = await onB.next();
    assert.equal(snapshot.event, 'snapshot');
    assert.ok(JSON.parse(snapshot.data).exams.some((e: any) => e.exam_id === exam.id));

    const sentAt = performance.now();
    await post(baseA, `/api/tasks/${tasks[0].id}`, { status: 'completed' }, 'PATCH');
    const moved = await onB.next(EVENT_WITHIN_MS);
    const latencyMs = performance.now() - sentAt;
    assert.equal(moved.event, 'readiness');
    const chemistry = JSON.parse(moved.data).exams.find((e: any) => e.exam_id === exam.id);
    assert.equal(chemistry.readiness.details.tasks_completed, 1);
    console.log(
      `      (from the PATCH sent to process A to the event on process B's stream: ${latencyMs.toFixed(0)} ms)`,
    );

    // B stops: its stream ends with service_restarting and the id to resume from.
    b.child.kill('SIGTERM');
    const last = await onB.next(10_000);
    assert.equal(last.event, 'error');
    assert.equal(JSON.parse(last.data).code, 'service_restarting');
    assert.equal(last.id, moved.id);
    assert.equal(await b.exited, 0);

    // A move while the client is away, then the reconnection reaches A.
    await post(baseA, `/api/tasks/${tasks[1].id}`, { status: 'completed' }, 'PATCH');
    const onA = await open(baseA, { 'Last-Event-ID': last.id! });
    const missed = await onA.next();
    assert.equal(missed.event, 'readiness', 'what was missed, not a snapshot');
    assert.ok(Number(missed.id) > Number(last.id));
    assert.equal(JSON.parse(missed.data).exams.find((e: any) => e.exam_id === exam.id).readiness.coverage, 1);
  });
});
