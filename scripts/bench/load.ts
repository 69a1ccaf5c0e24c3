// The load generator, run in a child process by scenarios.ts: on a 2-core machine autocannon in the server's own
// event loop would take CPU from the server it measures and add its own memory to the server's RSS.
// Receives a warm-up (absent when the target is warm already) and a measured run; says when the measured run starts (so the parent can read its CPU
// clock), answers with the measured result only, and exits.
import autocannon from 'autocannon';

process.once('message', async (runs: { warmup?: autocannon.Options; measured: autocannon.Options }) => {
  try {
    // Warm-up: JIT, connection pools and caches settle before anything is counted.
    if (runs.warmup) await autocannon(runs.warmup);
    process.send?.({ measuring: true });
    const result = await autocannon(runs.measured);
    process.send?.({ result }, () => process.exit(0));
  } catch (error) {
    process.send?.({ error: String(error) }, () => process.exit(1));
  }
});
