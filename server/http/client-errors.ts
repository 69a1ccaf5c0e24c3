// Requests that Node's HTTP parser refuses before the app sees them: a malformed request line or header, headers
// larger than Node takes, a request that did not arrive within REQUEST_TIMEOUT_MS. Node answers these on its own with
// a status line and no body, so the client gets no problem document and no `code` to branch on. This listener answers
// them as every other error: problem+json from the catalog, then the connection closed (the parser's state is lost).
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { problemFields, problems, type Problem } from './problems.ts';

/** What the parser's refusal is, by its error code; anything else the parser refuses is a malformed request. */
function problemForParserError(code: string | undefined): Problem {
  if (code === 'HPE_HEADER_OVERFLOW') return problems.headersTooLarge();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return problems.requestTimeout();
  return problems.malformedRequest();
}

/** The raw response: the socket has no ServerResponse, as no request was parsed. */
function clientErrorResponse(code: string | undefined): string {
  const problem = problemForParserError(code);
  const body = JSON.stringify(problemFields(problem));
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
    'Content-Type: application/problem+json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** Makes `server` answer the parser's refusals with problems (Node's documented `clientError` contract). */
export function answerClientErrors(server: Server): Server {
  return server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // As Node's own answer: only on a connection that has written nothing yet, since an earlier response on a
    // kept-alive connection may still be under way; otherwise, or on a reset, the connection is only closed.
    if (error.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) return void socket.destroy();
    socket.end(clientErrorResponse(error.code));
  });
}
