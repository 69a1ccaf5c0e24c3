// Graceful stop: no new connections, idle keep-alive connections closed at once, requests in flight allowed to
// finish, and after the grace period every connection closed regardless.
import type { Server } from 'node:http';

/** How often connections that finished their last request are closed while the server drains. */
const IDLE_SWEEP_MS = 50;

export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // A keep-alive connection whose request finishes during the drain would otherwise stay open until the
    // keep-alive timeout (5 s) and hold up the stop; closing idle connections repeatedly ends each one as it frees.
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.closeIdleConnections();
    server.once('close', () => {
      clearInterval(sweep);
      clearTimeout(force);
    });
  });
}
