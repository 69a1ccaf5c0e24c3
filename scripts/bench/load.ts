// The load generator, run in a child process by scenarios.ts: on a 2-core machine autocannon in the server's own
// event loop would take CPU from the server it measures and add its own memory to the server's RSS.
// Receives a run; says when it starts (so the parent can read its CPU clock), answers with its result, and exits.
import autocannon from 'autocannon';

// oxlint-disable-next-line typescript/no-misused-promises -- the listener cannot reject: it answers every failure
process.once('message', async (runs: { measured: autocannon.Options }) => {
  try {
    process.send?.({ measuring: true });
    const result = await autocannon(runs.measured);
    process.send?.({ result }, () => process.exit(0));
  } catch (error) {
    process.send?.({ error: String(error) }, () => process.exit(1));
  }
});
