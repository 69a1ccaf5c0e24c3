// Receivers' side of webhooks: the published test vector (docs/webhooks.md) signs as printed (checked with the
// standardwebhooks library and by hand), and the SDK's verifyWebhook returns the typed event or throws.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/index.ts';
import { assertEventConforms } from '../support/event-contract.ts';

/** The test vector of docs/webhooks.md. */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'd1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6',
  timestamp: 1795435200,
  body: '{"id":"d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6","type":"webhook.test","created_at":"2026-11-23T12:00:00.000Z","student_id":"5b0c7a4e-1f1d-5e0a-9a47-3d1c2a7b9e10","data":{"object":{"id":"6a1f0c2d-3b4e-4f5a-8b6c-7d8e9f0a1b2c","url":"https://receiver.example.com/study-companion/events","event_types":["task.created","task.completed"],"description":"My planner","status":"enabled","failing_since":null,"previous_secret_expires_at":null,"created_at":"2026-11-23T11:58:00.000Z","updated_at":"2026-11-23T11:58:00.000Z"}}}',
  signature: 'v1,PnVYzG7qjSKBAouQDGYV/FnLIA2M3y0lHG03mo0QSNc=',
};

const headersFor = (secret: string, id: string, at: Date, body: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(secret).sign(id, at, body),
});

describe('webhook test vector', () => {
  it('signs as docs/webhooks.md publishes it, by the standardwebhooks library and by hand', () => {
    assert.equal(
      new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body),
      VECTOR.signature,
    );
    const key = Buffer.from(VECTOR.secret.slice('whsec_'.length), 'base64');
    const byHand = createHmac('sha256', key).update(`${VECTOR.id}.${VECTOR.timestamp}.${VECTOR.body}`).digest('base64');
    assert.equal(`v1,${byHand}`, VECTOR.signature);
    const guide = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    for (const part of [VECTOR.secret, VECTOR.id, String(VECTOR.timestamp), VECTOR.body, VECTOR.signature])
      assert.ok(guide.includes(part), `docs/webhooks.md lacks ${part}`);
    assertEventConforms(JSON.parse(VECTOR.body));
  });
});

describe('SDK: verifyWebhook', () => {
  it('returns the typed event of a delivery signed now, whatever the header names’ case', () => {
    const id = randomUUID();
    const body = VECTOR.body.replaceAll(VECTOR.id, id);
    const headers = headersFor(VECTOR.secret, id, new Date(), body);
    const event = verifyWebhook(
      VECTOR.secret,
      Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v])),
      body,
    );
    assert.equal(event.type, 'webhook.test');
    if (event.type === 'webhook.test') assert.equal(event.data.object.description, 'My planner'); // narrowed by type
    assert.equal(verifyWebhook(VECTOR.secret, new Headers(headers), Buffer.from(body)).id, id);
  });

  it('accepts either of two signatures, as during a secret rotation', () => {
    const other = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const at = new Date();
    const signature = [other, VECTOR.secret]
      .map((secret) => new Webhook(secret).sign(VECTOR.id, at, VECTOR.body))
      .join(' ');
    const headers = { ...headersFor(VECTOR.secret, VECTOR.id, at, VECTOR.body), 'webhook-signature': signature };
    assert.equal(verifyWebhook(other, headers, VECTOR.body).id, VECTOR.id);
    assert.equal(verifyWebhook(VECTOR.secret, headers, VECTOR.body).id, VECTOR.id);
  });

  it('throws for another secret, an altered body, a missing header, and a timestamp over 5 minutes off', () => {
    const at = new Date();
    const headers = headersFor(VECTOR.secret, VECTOR.id, at, VECTOR.body);
    const other = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    assert.throws(() => verifyWebhook(other, headers, VECTOR.body), WebhookVerificationError);
    assert.throws(
      () => verifyWebhook(VECTOR.secret, headers, VECTOR.body.replace('My planner', 'Your planner')),
      WebhookVerificationError,
    );
    assert.throws(
      () => verifyWebhook(VECTOR.secret, { ...headers, 'webhook-signature': undefined }, VECTOR.body),
      WebhookVerificationError,
    );
    // The published vector's own timestamp lies in the past: replayed today it is refused.
    const stale = {
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(VECTOR.timestamp),
      'webhook-signature': VECTOR.signature,
    };
    if (Date.now() / 1000 - VECTOR.timestamp > 300)
      assert.throws(() => verifyWebhook(VECTOR.secret, stale, VECTOR.body), WebhookVerificationError);
    const old = new Date(Date.now() - 6 * 60_000);
    assert.throws(
      () => verifyWebhook(VECTOR.secret, headersFor(VECTOR.secret, VECTOR.id, old, VECTOR.body), VECTOR.body),
      WebhookVerificationError,
    );
  });
});
