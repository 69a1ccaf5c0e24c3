// Structured JSON logs (readable lines through pino-pretty when stdout is a terminal: a person is watching, not a log
// collector). Credentials never reach a log line: the headers that carry them are censored, and so is Location, whose
// OAuth redirects carry the authorization code (every response header is logged but the security headers, the same on
// every response).
import { randomUUID } from 'node:crypto';
import { IncomingMessage, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level }, destination ?? (process.stdout.isTTY ? terminalLines() : batchedLines(process.stdout.fd)));
}

/**
 * What a person at a terminal reads: one line per log entry, and a request as `GET /api/tasks 200 4 ms` rather than its
 * whole JSON (headers included, ~30 lines a request), so that what start-up prints (the demo credentials) does not
 * scroll away under the first few requests. The JSON lines, with every field, are what a log collector gets.
 */
export function terminalLines(destination?: NodeJS.WritableStream): DestinationStream {
  return pretty({
    colorize: destination === undefined,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,req,res,responseTime',
    messageFormat: (log, messageKey) => {
      const message = String(log[messageKey] ?? '');
      const req = log.req as { method?: string; url?: string } | undefined;
      if (!req) return message;
      const res = log.res as { statusCode?: number } | undefined;
      return res
        ? `${req.method} ${req.url} ${res.statusCode} ${String(log.responseTime)} ms${message === 'request completed' ? '' : ` (${message})`}`
        : `${message} (${req.method} ${req.url})`;
    },
    ...(destination ? { destination } : {}),
  });
}

/** Request lines held before a write; any other line is written at once, with the request lines before it. */
const BATCH_BYTES = 32 * 1024;
/** sonic-boom's largest single write; it must exceed BATCH_BYTES (its default, 16 KB, would not). */
const MAX_WRITE_BYTES = 2 * BATCH_BYTES;
const BATCH_MAX_WAIT_MS = 1000;
let writingRequestLine = false;

/**
 * Where the JSON lines go: pino's own destination (sonic-boom, asynchronous writes) on `fd`, except that request lines
 * are held until 32 KB of them are waiting or a second has passed, and go out in one write. Each write is a round trip
 * to the thread pool (a wake-up and two context switches on a busy core), and a general-surface request line is about
 * 2 KB: at 4 KB a batch that was a write every other request. Lines stay in
 * order; every other line (start-up, warnings, errors) is written at once. pino writes what is held when the process
 * exits (also after an uncaught exception); a kill -9 or a crash of the runtime loses the request lines of the last
 * second, at most 32 KB. Synchronous writes would cost a little less CPU, but a log reader that stops reading (a
 * stalled log driver) would then stop the event loop with it; asynchronous, it only holds lines back.
 */
export function batchedLines(fd: number): DestinationStream {
  const out = pino.destination({
    dest: fd,
    minLength: BATCH_BYTES,
    maxWrite: MAX_WRITE_BYTES,
    periodicFlush: BATCH_MAX_WAIT_MS,
  });
  // A flush while a write is under way does nothing, and the end of that write leaves what is held below 32 KB: the
  // line would wait for the timer. So the flush is made again when that write is done.
  let flushAfterWrite = false;
  out.on('drain', () => {
    if (!flushAfterWrite) return;
    flushAfterWrite = false;
    out.flush();
  });
  return {
    write(line: string) {
      out.write(line);
      if (writingRequestLine) return;
      flushAfterWrite = true;
      out.flush();
    },
  };
}

// `req` and `res` are logged only here (the request line, `req.log`'s binding), through these serializers, which censor
// the headers that carry credentials as they copy them. pino's `redact` did the same on every line with a `req` or
// `res` by cloning the paths it censors: about 40% of the CPU of writing the request line.
const CENSORED = '[redacted]';
const CREDENTIAL_REQUEST_HEADERS = ['authorization', 'x-service-api-key', 'cookie'] as const;
const CREDENTIAL_RESPONSE_HEADERS = ['set-cookie', 'location'] as const;

/**
 * pino's standard request fields (pino.stdSerializers.req: `id`, `method`, `url`, `query` and `params` where the request
 * has them, `headers`, `remoteAddress`, `remotePort`, in that order), with the headers that carry credentials censored
 * in a copy of the headers. Built as a plain object: the standard serializer's object, made on a prototype of
 * defaults, costs more to make and to stringify, for the same JSON.
 */
function serializeRequest(req: IncomingMessage) {
  let headers: IncomingHttpHeaders = req.headers;
  let copied = false;
  for (const name of CREDENTIAL_REQUEST_HEADERS) {
    if (req.headers[name] === undefined) continue;
    if (!copied) headers = { ...req.headers };
    copied = true;
    headers[name] = CENSORED;
  }
  const seen = req as IncomingMessage & { originalUrl?: string; path?: unknown; query?: unknown; params?: unknown };
  const socket = req.socket as { remoteAddress?: string; remotePort?: number } | null;
  const line: Record<string, unknown> = {
    id: typeof req.id === 'function' ? (req.id as () => string)() : req.id || undefined,
    method: req.method,
    // Express keeps the whole target in originalUrl (a mounted router shortens url); Node's request has url only.
    url: seen.originalUrl || (typeof seen.path === 'string' ? seen.path : req.url),
  };
  if (seen.query) line.query = seen.query;
  if (seen.params) line.params = seen.params;
  line.headers = headers;
  line.remoteAddress = socket ? socket.remoteAddress : socket;
  line.remotePort = socket ? socket.remotePort : socket;
  return line;
}

/**
 * pino's standard response fields (`statusCode`, `headers`), except the headers set to the same value on every
 * response (`sameOnEveryResponse`: the security headers), which say nothing about this request: serialising them
 * more than doubled a line's size and was most of what writing a line cost. A header
 * a response sets to another value (the sign-in page's own Content-Security-Policy) is logged.
 */
function responseSerializer(sameOnEveryResponse: ReadonlyArray<readonly [string, string]>) {
  const constant = new Map(sameOnEveryResponse.map(([name, value]) => [name.toLowerCase(), value]));
  return (res: ServerResponse) => {
    const headers: OutgoingHttpHeaders = {};
    for (const name of res.getHeaderNames()) {
      const value = res.getHeader(name);
      if (constant.get(name) === value) continue;
      headers[name] = (CREDENTIAL_RESPONSE_HEADERS as readonly string[]).includes(name) ? CENSORED : value;
    }
    return { statusCode: res.statusCode, headers };
  };
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The request's id (X-Request-Id), set by requestLogging. */
    id: string;
    /** A logger bound to the request, set by requestLogging. */
    log: Logger;
  }
}

export interface RequestLoggingOptions {
  /** Paths logged at debug level only (probes). */
  quietPaths?: ReadonlySet<string>;
  /** Response headers every response carries with the same value, left out of the request line. */
  sameOnEveryResponse?: ReadonlyArray<readonly [string, string]>;
}

const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Request logging with an id per request: the client's X-Request-Id when sane, else a new UUID, echoed back.
 * Requests to `quietPaths` (probes, every few seconds from every balancer) are logged at debug level only.
 * One line per request when it ends, as pino-http writes it (`req`, `res`, `responseTime`), but nothing is built for a
 * line the level drops: `req.log` (a child logger bound to the request) is made on first use, and the response line
 * only when its level is enabled. pino-http builds both on every request, which at LOG_LEVEL=warn cost ~5% of the
 * hot read path's CPU for lines never written.
 */
export function requestLogging(logger: Logger, options: RequestLoggingOptions = {}) {
  const quietPaths = options.quietPaths ?? new Set();
  const serializeResponse = responseSerializer(options.sameOnEveryResponse ?? []);
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const sent = req.headers['x-request-id'];
    const id = typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
    res.setHeader('X-Request-Id', id);
    req.id = id;
    (req as Logged)[REQUEST_LOGGER] = logger;
    const started = Date.now();
    res.once('close', () => {
      const url = req.url ?? '';
      const query = url.indexOf('?');
      const quiet = quietPaths.size > 0 && quietPaths.has(query === -1 ? url : url.slice(0, query));
      const level = quiet
        ? 'debug'
        : res.statusCode >= 500
          ? 'error'
          : res.statusCode >= 400 || !res.writableFinished
            ? 'warn'
            : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const line = { req: serializeRequest(req), res: serializeResponse(res), responseTime: Date.now() - started };
      writingRequestLine = true; // pino writes within the call (batchedLines)
      try {
        logger[level](line, res.writableFinished ? 'request completed' : 'request aborted');
      } finally {
        writingRequestLine = false;
      }
    });
    next();
  };
}

const REQUEST_LOGGER = Symbol('request logger');
const BOUND_LOGGER = Symbol('bound request logger');
type Logged = IncomingMessage & { [REQUEST_LOGGER]?: Logger; [BOUND_LOGGER]?: Logger };

// `req.log`, bound to the request on first use. A getter on the prototype, defined once: a property defined on each
// request object would cost more than the logger it defers.
Object.defineProperty(IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: Logged) {
    const logger = this[REQUEST_LOGGER];
    if (!logger) return undefined;
    return (this[BOUND_LOGGER] ??= logger.child({ req: serializeRequest(this) }));
  },
});
