// Structured JSON logs (readable lines through pino-pretty when stdout is a terminal: a person is watching, not a
// log collector). Credentials never reach a log line: the headers that carry them are redacted, and so is
// Location, whose OAuth redirects carry the authorization code (pino-http logs every response header).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import pretty from 'pino-pretty';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-service-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]', 'res.headers.location'],
        censor: '[redacted]',
      },
    },
    destination ?? (process.stdout.isTTY ? pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l' }) : undefined),
  );
}

const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Request logging with an id per request: the client's X-Request-Id when sane, else a new UUID, echoed back.
 * Requests to `quietPaths` (probes, every few seconds from every balancer) are logged at debug level only.
 */
export function requestLogging(logger: Logger, quietPaths: ReadonlySet<string> = new Set()) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const sent = req.headers['x-request-id'];
      const id = typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (req, res, err) =>
      quietPaths.has(req.url?.split('?')[0] ?? '') ? 'debug' : err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
  });
}
