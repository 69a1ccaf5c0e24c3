// What a person starting the service reads first: where it listens and how to try it.
import { cliEnvironmentFor, describeTarget } from '../../db/connect.ts';
import type { DemoCredentials } from '../demo-student.ts';
import type { ProcessContext } from './context.ts';

export function banner(
  { config, embedded, clustered }: ProcessContext,
  port: number,
  demo: DemoCredentials | undefined,
  metricsAt: string | undefined,
): string {
  const base = `http://localhost:${port}`;
  // Hints name the database they act on: a bare `npm run cli` would write into the embedded one. On PostgreSQL the
  // CLI also needs the servers' SECRETS_KEY (it opens the secrets sealed in the database): named, never printed.
  const secretsKey = 'databaseUrl' in config.database ? 'SECRETS_KEY="$SECRETS_KEY" ' : '';
  const cli = `${cliEnvironmentFor(config.database)}${secretsKey}npm run cli --`;
  const processes = clustered ? `, ${config.webConcurrency} processes` : '';
  return [
    `study-companion-api listening on ${base}  (${describeTarget(config.database)}${processes})`,
    `  docs: ${base}/docs (general)  ${base}/api/v1/docs (partner)`,
    `  partner API v1: ${base}/api/v1/health`,
    ...(metricsAt ? [`  metrics (Prometheus): ${metricsAt}`] : []),
    demo
      ? `  demo partner key (shown once, stored only as a hash):\n    ${demo.partnerKey}\n  try: curl -H "X-Service-API-Key: ${demo.partnerKey}" ${base}/api/v1/universities?limit=3`
      : `  create a partner key: ${cli} keys create --name "my key"`,
    demo
      ? `  demo student ${demo.student.email}, password ${demo.student.password} (sign in at ${base}/oauth/authorize)\n` +
        `  demo student's personal API key, every scope (shown once):\n    ${demo.student.key}\n` +
        `  try: curl -H "X-Service-API-Key: ${demo.student.key}" ${base}/api/today/loop\n` +
        `  lost them? new demo credentials: ${cli} demo credentials  (works while the server runs)`
      : `  create a student: ${cli} users create --email you@example.com --nickname you`,
    ...(embedded && !demo ? [`  new demo credentials: ${cli} demo credentials`] : []),
  ].join('\n');
}

/** The worker role's line: it has no listener to name. */
export function workerBanner({ config }: ProcessContext, metricsAt: string | undefined): string {
  return `study-companion-api worker: delivering webhooks  (${describeTarget(config.database)})${metricsAt ? `\n  metrics (Prometheus): ${metricsAt}` : ''}`;
}
