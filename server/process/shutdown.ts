// Closing an HTTP server without resetting a request. HTTP/1.1 keep-alive makes this delicate: a client may write
// its next request onto a connection at the very moment the server closes it as idle, and the client then sees
// ECONNRESET for a request it had every right to send. So a draining server tells each client, in the response
// itself (`Connection: close`), that the connection ends after it: the client's next request goes to a new
// connection, which is either served (still draining) or cleanly refused (listener closed).
import type { Socket } from 'node:net';
import type { Server, ServerResponse } from 'node:http';

/** How long a connection accepted just before the listener closed may take to send its first request. */
const FIRST_REQUEST_WAIT_MS = 1000;

export interface ConnectionDrain {
  /** From now on every response ends its connection (`Connection: close`, or the socket ended after a stream). */
  closeAfterEachResponse(): void;
  /**
   * Stops accepting connections (resolved once the listener is closed); `allEnded` resolves once every connection
   * has ended: a request in flight finishes, a keep-alive connection without a request is ended, a connection that
   * has not sent its request yet gets a moment to.
   */
  closeListener(): Promise<{ allEnded: Promise<void> }>;
  /** Ends every connection at once, requests in flight included (the deadline has come). */
  destroyAll(): void;
  /** Resolves once no connection is open: at once if none is. */
  noneOpen(): Promise<void>;
  /** Connections open now. */
  readonly open: number;
}

interface ConnectionState {
  /** Responses not ended yet (more than one only with pipelining). */
  responses: Set<ServerResponse>;
  /** Whether the connection has carried a request yet. */
  used: boolean;
}

/** Call right after `listen()`, before any connection arrives: it tracks every connection from the first. */
export function drainConnections(server: Server): ConnectionDrain {
  const connections = new Map<Socket, ConnectionState>();
  const waitingForNone = new Set<() => void>();
  let draining = false;

  const endIfIdle = (socket: Socket, state: ConnectionState) => {
    if (state.responses.size === 0 && !socket.destroyed) socket.end();
  };

  server.on('connection', (socket: Socket) => {
    const state: ConnectionState = { responses: new Set(), used: false };
    connections.set(socket, state);
    socket.once('close', () => {
      connections.delete(socket);
      if (connections.size > 0) return;
      for (const resolve of waitingForNone) resolve();
      waitingForNone.clear();
    });
  });
  // Before the app's own listener, so that every response, whichever middleware writes it, carries the header.
  server.prependListener('request', (req, res) => {
    const socket = req.socket;
    const state = connections.get(socket);
    if (!state) return;
    state.responses.add(res);
    state.used = true;
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      state.responses.delete(res);
      // A stream that began before the drain promised keep-alive in its headers; end its connection ourselves.
      if (draining) endIfIdle(socket, state);
    });
  });

  return {
    closeAfterEachResponse() {
      draining = true;
      for (const { responses } of connections.values()) {
        for (const res of responses) if (!res.headersSent) res.setHeader('Connection', 'close');
      }
    },
    async closeListener() {
      draining = true;
      await afterATurnWithoutConnections(server);
      // Ends the keep-alive connections without a request in progress. A connection accepted a moment ago whose
      // request is still on its way counts as busy (Node 20), so it is served; one that never sends a request is
      // ended after a while, or it would hold the stop up to the deadline.
      const allEnded = new Promise<void>((resolve) => server.close(() => resolve()));
      const firstRequestWait = setTimeout(() => {
        for (const [socket, state] of connections) if (!state.used) endIfIdle(socket, state);
      }, FIRST_REQUEST_WAIT_MS);
      void allEnded.then(() => clearTimeout(firstRequestWait));
      return { allEnded };
    },
    destroyAll() {
      for (const socket of connections.keys()) socket.destroy();
    },
    noneOpen() {
      return connections.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waitingForNone.add(resolve));
    },
    get open() {
      return connections.size;
    },
  };
}

/** Event-loop turns a stop waits at most for one that accepts no connection. */
const MAX_TURNS_BEFORE_CLOSE = 50;

/**
 * Resolves right after an event-loop turn whose I/O phase accepted no connection. Closing a listening socket makes
 * the kernel reset the connections it completed but the process has not accepted yet (their clients see
 * ECONNRESET on a brand-new connection); on a busy loop they wait there for as long as a turn takes. Closing just
 * after a turn that found the accept queue empty leaves almost nothing there to reset.
 */
async function afterATurnWithoutConnections(server: Server): Promise<void> {
  for (let turn = 0; turn < MAX_TURNS_BEFORE_CLOSE; turn++) {
    let accepted = false;
    const mark = () => (accepted = true);
    server.on('connection', mark);
    await new Promise((resolve) => setImmediate(resolve));
    server.off('connection', mark);
    if (!accepted) return;
  }
}
