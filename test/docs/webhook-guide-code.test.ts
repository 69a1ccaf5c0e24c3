// The copy-paste verification code of docs/webhooks.md works as printed: the Node and Python functions are taken from
// the guide's `verify-webhook` blocks and run against its test vector, a delivery signed now, a rotation's two
// signatures, and the deliveries they must refuse. (Go is not installed on the test machines: its block is not run.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { fencedBlocks, guideBlocks, REPO } from './guide-blocks.ts';

const GUIDE = 'docs/webhooks.md';
const codeOf = (language: string) => {
  const blocks = guideBlocks(GUIDE).filter((block) => block.language === language && block.name === 'verify-webhook');
  assert.equal(blocks.length, 1, `${GUIDE} has one \`${language} verify-webhook\` block`);
  return blocks[0]!.code;
};

/** The guide's test vector, read from its table and its json block. */
function vector() {
  const guide = readFileSync(join(REPO, GUIDE), 'utf8');
  const cell = (name: string) => new RegExp(`\\| ${name} \\| \`([^\`]+)\``).exec(guide)![1]!;
  const body = fencedBlocks(GUIDE).find((block) => block.info === 'json')!.code;
  return {
    secret: cell('secret'),
    id: cell('`webhook-id`'),
    timestamp: Number(cell('`webhook-timestamp`')),
    signature: cell('`webhook-signature`'),
    body,
  };
}

/** Cases every implementation must answer alike: [name, headers, body, now in seconds, the event id or null for a refusal]. */
function cases() {
  const v = vector();
  const now = Math.floor(Date.now() / 1000);
  const headers = (signature: string, timestamp = v.timestamp) => ({
    'webhook-id': v.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  });
  const other = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const signedNow = new Webhook(v.secret).sign(v.id, new Date(now * 1000), v.body);
  const rotation = `${new Webhook(other).sign(v.id, new Date(now * 1000), v.body)} ${signedNow}`;
  return [
    ['the test vector', headers(v.signature), v.body, v.timestamp, v.id],
    ['a delivery signed now', headers(signedNow, now), v.body, now, v.id],
    ['a rotation: two signatures, the second ours', headers(rotation, now), v.body, now, v.id],
    ['an altered body', headers(v.signature), v.body.replace('My planner', 'Your planner'), v.timestamp, null],
    ['the vector replayed today', headers(v.signature), v.body, now, null],
    ['6 minutes late', headers(signedNow, now), v.body, now + 360, null],
    ['another secret', headers(new Webhook(other).sign(v.id, new Date(now * 1000), v.body), now), v.body, now, null],
    ['no signature', { 'webhook-id': v.id, 'webhook-timestamp': String(now) }, v.body, now, null],
    ['a timestamp that is no number', headers(signedNow, Number.NaN), v.body, now, null],
    ['a v2 signature', headers(signedNow.replace('v1,', 'v2,'), now), v.body, now, null],
  ] as const;
}

describe('the verification code of docs/webhooks.md', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-guide-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('publishes a test vector that signs as printed', () => {
    const v = vector();
    assert.equal(new Webhook(v.secret).sign(v.id, new Date(v.timestamp * 1000), v.body), v.signature);
  });

  it('Node: verifyWebhook accepts what is signed and refuses the rest', async () => {
    const file = join(dir, 'verify.mjs');
    writeFileSync(file, codeOf('js'));
    const { verifyWebhook } = (await import(file)) as {
      verifyWebhook: (s: string, h: Record<string, string>, b: string | Buffer, now?: number) => { id: string };
    };
    const { secret } = vector();
    for (const [name, headers, body, now, id] of cases()) {
      for (const asBytes of [false, true]) {
        const call = () => verifyWebhook(secret, headers, asBytes ? Buffer.from(body) : body, now);
        if (id) assert.equal(call().id, id, `${name} is accepted`);
        else assert.throws(call, Error, `${name} is refused`);
      }
    }
  });

  it('Python: verify_webhook accepts what is signed and refuses the rest', function () {
    if (spawnSync('python3', ['--version']).status !== 0) this.skip(); // reported as pending, never silently passed
    writeFileSync(join(dir, 'verify_webhook_guide.py'), codeOf('python'));
    const driver = `
import json, sys
from verify_webhook_guide import verify_webhook
secret, cases = json.load(sys.stdin)
out = []
for name, headers, body, now, _ in cases:
    try:
        out.append(verify_webhook(secret, headers, body.encode(), now=now)["id"])
    except ValueError:
        out.append(None)
print(json.dumps(out))`;
    const all = cases();
    const answer = execFileSync('python3', ['-c', driver], {
      cwd: dir,
      input: JSON.stringify([vector().secret, all]),
      encoding: 'utf8',
    });
    assert.deepEqual(
      JSON.parse(answer),
      all.map((c) => c[4]),
      all.map((c) => c[0]).join(', '),
    );
  });
});
