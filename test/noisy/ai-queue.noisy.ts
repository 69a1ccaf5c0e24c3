// The AI queue (issue item 6): a free account sends 20 chats at once (its whole hourly AI budget) to a tutor whose
// upstream replies slowly. The waiting slots are shared fairly between accounts (a per-account cap on queued replies,
// contract plans keep their priority), so the victim's own chat is admitted: a 200 whose stream starts at once, not a
// 503 for a queue the attacker filled.
import { createParser } from 'eventsource-parser';
import { sleep } from '../faults/support/fixture.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from '../support/chat-completions-server.ts';
import { Attacker } from './support/attacker.ts';
import { ms } from './support/latency.ts';
import { neighbourhood, type Neighbourhood } from './support/neighbourhood.ts';
import { assertUnharmed, unless, victimUnderAttack } from './support/victim.ts';

/** The free plan's AI budget for an hour, all at once. */
const CHATS = 20;
const HOLD_MS = 8_000;
/** The victim's chat: answered, and its first event, within this long. */
const ADMITTED_WITHIN_MS = 2_000;

interface ChatOutcome {
  status: number;
  code: string | undefined;
  firstEvent: string | undefined;
  ms: number;
}

describe('noisy neighbour: the AI queue filled by one account', function () {
  this.timeout(90_000);
  let n: Neighbourhood;
  let upstream: ChatCompletionsServer;

  before(async () => {
    upstream = await startChatCompletionsServer();
    // A slow model: a piece every 250 ms for as long as the reply is read.
    upstream.behave({ kind: 'endless', everyMs: 250 });
    n = await neighbourhood('ai', { env: { AI_BASE_URL: upstream.baseUrl, AI_API_KEY: 'test-key' } });
  });
  after(async () => {
    await n?.close();
    await upstream?.close();
  });

  /** The victim asks the tutor; resolves with the status and the stream's first event, then hangs up. */
  async function victimChat(): Promise<ChatOutcome> {
    const started = performance.now();
    const abort = new AbortController();
    const deadline = setTimeout(() => abort.abort(), 5_000);
    try {
      const res = await fetch(`${n.base}/api/ai/chat`, {
        method: 'POST',
        headers: { 'X-Service-API-Key': n.victim.key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'What should I revise today?' }),
        signal: abort.signal,
      });
      if (res.status !== 200) {
        const body = (await res.json().catch(() => ({}))) as { code?: string };
        return { status: res.status, code: body.code, firstEvent: undefined, ms: performance.now() - started };
      }
      let firstEvent: string | undefined;
      const parser = createParser({ onEvent: ({ event }) => void (firstEvent ??= event) });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (firstEvent) break;
      }
      return { status: 200, code: undefined, firstEvent, ms: performance.now() - started };
    } catch {
      return { status: 0, code: undefined, firstEvent: undefined, ms: performance.now() - started };
    } finally {
      clearTimeout(deadline);
      abort.abort();
    }
  }

  it(`${CHATS} concurrent chats of a free account leave room for the victim's`, async () => {
    const attacker = new Attacker(n.base, n.attacker.key);
    const victims: ChatOutcome[] = [];
    const verdict = await victimUnderAttack(
      n,
      'AI queue',
      async (pressure) => {
        const held = await Promise.all(
          Array.from({ length: CHATS }, (_, i) =>
            attacker.hold('POST /api/ai/chat', '/api/ai/chat', {
              method: 'POST',
              body: { message: `Explain topic ${i} at length` },
              read: 'drain',
              countEvents: 'message.delta',
            }),
          ),
        );
        const until = performance.now() + HOLD_MS;
        await sleep(1_000);
        victims.push(await victimChat());
        await sleep(Math.max(0, until - 2_000 - performance.now()));
        victims.push(await victimChat());
        await sleep(Math.max(0, until - performance.now()));
        const generating = upstream.requests.filter((r) =>
          r.body.messages.some((m) => /^Explain topic/.test(m.content)),
        ).length;
        const deltas = held.reduce((sum, h) => sum + h.counted, 0);
        attacker.releaseAll();
        pressure.note(
          `${CHATS} chats sent at once to a model that replies a piece every 250 ms, held ${HOLD_MS / 1000} s: admitted ${held.filter((h) => h.status === 200).length}, of which the upstream was asked for ${generating} replies (${deltas} pieces streamed to the attacker)`,
        );
        pressure.note(
          `the victim's chats: ${victims.map((v) => `${v.status}${v.code ? ` ${v.code}` : ''}${v.firstEvent ? ` (${v.firstEvent})` : ''} in ${ms(v.ms)}`).join(', ')}`,
        );
        pressure.note(attacker.describe());
      },
      [{ method: 'POST', path: '/api/ai/chat', body: { message: 'Hello' } }],
    );

    assertUnharmed(verdict, [
      ...victims
        .filter((v) => v.status !== 200 || v.firstEvent === undefined || v.ms > ADMITTED_WITHIN_MS)
        .map(
          (v) =>
            `the victim's chat answered ${v.status} ${v.code ?? ''} with first event ${v.firstEvent ?? 'none'} in ${ms(v.ms)} (must be a 200 whose stream starts within ${ms(ADMITTED_WITHIN_MS)})`,
        ),
      // The attack was made: replies were generated for the attacker, and its excess was refused as its own limit
      // (429), not as a full service (503).
      ...unless(
        attacker.answered('POST /api/ai/chat', 200) >= 1,
        `no chat of the attacker was admitted: ${attacker.describe()}`,
      ),
      ...unless(
        attacker.unansweredOr5xx().length === 0,
        `the attacker got no answer or a 5xx: ${attacker.unansweredOr5xx().join('; ')}`,
      ),
    ]);
  });
});
