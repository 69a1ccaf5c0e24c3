// GET /metrics on its own port (METRICS_PORT, bound to METRICS_HOST, 127.0.0.1 by default), never on the API's:
// the API port faces the internet, the metrics port only the scraper. In cluster mode the primary serves it,
// aggregating its workers' registries (prom-client's AggregatorRegistry over the cluster's IPC channel).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function serveMetrics(
  where: { port: number; host: string },
  render: () => Promise<string>,
  contentType: string,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Metrics are at GET /metrics\n');
      return;
    }
    render().then(
      (text) =>
        res
          .writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : text),
      (error: Error) =>
        res.writeHead(503, { 'Content-Type': 'text/plain' }).end(`metrics unavailable: ${error.message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => resolve(server));
  });
}

export function metricsUrl(server: Server): string {
  const { address, port, family } = server.address() as AddressInfo;
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}/metrics`;
}
