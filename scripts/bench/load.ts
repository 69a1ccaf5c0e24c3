// The load generator, run in a child process by scenarios.ts: on a 2-core machine autocannon in the server's own
// event loop would take CPU from the server it measures and add its own memory to the server's RSS.
// Receives runs, one at a time, for the whole bench; says when each starts (so the parent can read its CPU clock) and
// answers with its result; exits when the bench ends (its channel closes).
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { FRESH_UUID_MARK, type LoadRequest, type LoadRun } from './scenarios.ts';

// oxlint-disable-next-line typescript/no-misused-promises -- the listener cannot reject: it answers every failure
process.on('message', async (run: LoadRun) => {
  try {
    process.send?.({ measuring: true });
    // Each connection in turn takes the next list of requests: a student of its own in a many-students scenario.
    let connection = 0;
    const setupClient = (client: autocannon.Client) =>
      client.setRequests(run.requests[connection++ % run.requests.length]!.map(withFreshUuids));
    const result = await autocannon({ ...run.options, setupClient });
    process.send?.({ result });
  } catch (error) {
    process.send?.({ error: String(error) });
  }
});
process.once('disconnect', () => process.exit(0));

/** A request whose marked uuids are made new each time it is sent (a sync push's commands run once per uuid). */
function withFreshUuids(request: LoadRequest): autocannon.Request {
  const { freshUuids, ...rest } = request;
  if (!freshUuids || request.body === undefined) return rest;
  const { body } = request;
  return {
    ...rest,
    setupRequest: (req: autocannon.Request) => ({
      ...req,
      body: body.replaceAll(FRESH_UUID_MARK, randomUUID().slice(0, FRESH_UUID_MARK.length)),
    }),
  };
}
