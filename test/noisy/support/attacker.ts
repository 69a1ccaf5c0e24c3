// The attacker's side of a scenario: every request it sends is counted against the free plan's minute (the budget
// each scenario prints) and tallied by what it was and how it was answered (status and problem code), so that a pass
// says what pressure was applied. Requests that hold a connection (an export never read, a stream) go on a
// connection of their own through node:http, apart from the victim's fetch pool.
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { createParser } from 'eventsource-parser';
import { attempt, type Answer } from '../../faults/support/fixture.ts';
import { describeCounts } from './latency.ts';
import { FREE_PER_MINUTE } from './neighbourhood.ts';

/** A response the attacker keeps open. */
export interface Held {
  status: number;
  /** The problem's `code` of a refusal, when it has one. */
  code: string | undefined;
  /** Bytes read so far (0 for a response held unread). */
  readonly bytes: number;
  /** Server-sent events named `countEvents` read so far. */
  readonly counted: number;
  /** Whether the connection is still open. */
  readonly open: boolean;
  /** Drops the connection, as a client that goes away. */
  close(): void;
}

export interface HoldOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  /** `never`: the response is left unread, so the server meets back-pressure; `drain`: read and thrown away. */
  read: 'never' | 'drain';
  /** With `drain`, of a text/event-stream: the name of the events to count (e.g. `readiness`). */
  countEvents?: string;
  /** How long to wait for the response's head; no head by then is status 0. */
  deadlineMs?: number;
}

export class Attacker {
  /** Requests sent in each minute window, the current one last. */
  readonly perMinute: number[] = [0];
  private readonly tallies = new Map<string, Map<string, number>>();
  private readonly held: Held[] = [];

  constructor(
    private readonly base: string,
    private readonly key: string,
  ) {}

  get sent(): number {
    return this.perMinute.reduce((a, b) => a + b, 0);
  }

  /** Starts counting a new minute window (see Neighbourhood.nextMinute). */
  newMinute(): void {
    this.perMinute.push(0);
  }

  /** One request with a deadline; no answer within it is status 0. */
  async call(what: string, method: string, path: string, body?: unknown, deadlineMs = 10_000): Promise<Answer> {
    this.count();
    const answer = await attempt(
      this.base + path,
      {
        method,
        headers: {
          'X-Service-API-Key': this.key,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      Math.max(1, Math.round(deadlineMs)),
    );
    this.tally(what, answer.status, typeof answer.body === 'object' ? answer.body?.code : undefined);
    return answer;
  }

  /** Sends a request and resolves with its head; a 200 stays open (read or not, as asked) until `close` or `releaseAll`. */
  hold(what: string, path: string, options: HoldOptions): Promise<Held> {
    this.count();
    const { method = 'GET', body, read, countEvents, deadlineMs = 10_000 } = options;
    return new Promise<Held>((resolve) => {
      let bytes = 0;
      let counted = 0;
      let open = true;
      let settled = false;
      const req: ClientRequest = request(new URL(path, this.base), {
        method,
        agent: false,
        headers: {
          'X-Service-API-Key': this.key,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
      });
      const held: Held = {
        status: 0,
        code: undefined,
        get bytes() {
          return bytes;
        },
        get counted() {
          return counted;
        },
        get open() {
          return open;
        },
        close: () => void req.destroy(),
      };
      const settle = (status: number, code: string | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        Object.assign(held, { status, code });
        this.tally(what, status, code);
        if (status === 200) this.held.push(held);
        resolve(held);
      };
      const timer = setTimeout(() => (req.destroy(), settle(0, undefined)), deadlineMs);
      req.on('socket', (socket) => socket.on('close', () => void (open = false)));
      req.on('error', () => settle(0, undefined));
      req.on('response', (res: IncomingMessage) => {
        res.on('error', () => {});
        if (res.statusCode !== 200) {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => settle(res.statusCode!, problemCode(text)));
          return;
        }
        if (read === 'drain') {
          const parser = countEvents
            ? createParser({ onEvent: ({ event }) => void (event === countEvents && counted++) })
            : undefined;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            bytes += Buffer.byteLength(chunk);
            parser?.feed(chunk);
          });
        }
        settle(200, undefined);
      });
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /** The responses held open and still open. */
  openHeld(): Held[] {
    return this.held.filter((h) => h.open);
  }

  /** Drops every held connection: the attacker stops. */
  releaseAll(): void {
    for (const held of this.held.splice(0)) held.close();
  }

  /** What the attacker sent and how it was answered, for the scenario's printout. */
  describe(): string {
    const lines = [...this.tallies].map(([what, counts]) => `${what} → ${describeCounts(counts)}`);
    const minutes =
      this.perMinute.length === 1
        ? `${this.sent} of the free plan's ${FREE_PER_MINUTE}/minute`
        : `${this.sent} in ${this.perMinute.length} minute windows of ≤ ${FREE_PER_MINUTE} (${this.perMinute.join(', ')})`;
    return [`attacker sent ${minutes}`, ...lines.map((line) => `  ${line}`)].join('\n');
  }

  /** How many answers of `what` had `status`. */
  answered(what: string, status: number): number {
    let n = 0;
    for (const [outcome, count] of this.tallies.get(what) ?? [])
      if (outcome.split(' ')[0] === String(status)) n += count;
    return n;
  }

  /** Answers that were no answer at all (status 0) or a 5xx, as `what → status×n`: a refusal must be in words. */
  unansweredOr5xx(): string[] {
    const found: string[] = [];
    for (const [what, counts] of this.tallies) {
      for (const [outcome, n] of counts) {
        const status = Number(outcome.split(' ')[0]);
        if (status === 0 || status >= 500) found.push(`${what} → ${outcome}×${n}`);
      }
    }
    return found;
  }

  private count(): void {
    this.perMinute[this.perMinute.length - 1]!++;
  }

  private tally(what: string, status: number, code: string | undefined): void {
    const counts = this.tallies.get(what) ?? new Map<string, number>();
    const outcome = code ? `${status} ${code}` : String(status);
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    this.tallies.set(what, counts);
  }
}

function problemCode(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { code?: string }).code;
  } catch {
    return undefined;
  }
}
