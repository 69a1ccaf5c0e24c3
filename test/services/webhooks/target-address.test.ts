// Where webhooks may go: https URLs of public addresses only, checked at registration and again on the address a
// delivery connects to; the operator setting lifts both for development and tests.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  assertDeliverableUrl,
  checkedLookup,
  isPublicAddress,
  UndeliverableUrlError,
} from '../../../services/webhooks/target-address.ts';
import { sendWebhook } from '../../../services/webhooks/send.ts';

const strict = { allowPrivate: false };
const refusal = (code: string) => (error: unknown) => error instanceof UndeliverableUrlError && error.code === code;

describe('webhook target addresses', () => {
  it('tells public addresses from loopback, private, link-local, shared and mapped ones', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.ok(isPublicAddress(address), address);
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
      'not an ip',
    ]) {
      assert.ok(!isPublicAddress(address), address);
    }
  });

  it('judges every IPv6 form that carries an IPv4 address by what it can reach', async () => {
    // The deprecated forms and the tunnels are refused whatever they carry: IPv4-compatible ::a.b.c.d, 6to4
    // 2002::/16, Teredo 2001::/32, and the local-use NAT64 prefix 64:ff9b:1::/48 (its IPv4 address sits where the
    // operator chose).
    for (const address of [
      '::127.0.0.1',
      '::7f00:1',
      '::8.8.8.8',
      '::10.0.0.1',
      '2002:7f00:1::1',
      '2002:808:808::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001::7f00:1',
      '64:ff9b:1::808:808',
    ]) {
      assert.ok(!isPublicAddress(address), address);
    }
    for (const url of [
      'https://[::127.0.0.1]/',
      'https://[::7f00:1]/hook',
      'https://[64:ff9b::7f00:1]/',
      'https://[2002:7f00:1::1]/',
      'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    ]) {
      await assert.rejects(assertDeliverableUrl(url, strict), refusal('webhook_url_not_public'), url);
    }
    // Mapped, translated and NAT64 (well-known prefix, what a DNS64 resolver answers) reach the IPv4 host they carry.
    for (const address of ['::ffff:8.8.8.8', '::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '64:ff9b::808:808'])
      assert.ok(isPublicAddress(address), address);
    for (const address of [
      '::ffff:127.0.0.1',
      '::ffff:0:10.0.0.1',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::192.168.0.1',
    ])
      assert.ok(!isPublicAddress(address), address);
    // Nor does a delivery connect to one, whatever the endpoint's row says.
    const sent = await sendWebhook({
      url: 'https://[::127.0.0.1]:9/hook',
      id: 'msg_1',
      payload: '{}',
      secrets: ['whsec_' + Buffer.alloc(32, 1).toString('base64')],
      timeoutMs: 2000,
      allowPrivate: false,
    });
    assert.match(sent.error!, /address not allowed/);
  });

  it('refuses at registration what is not https, not public or not resolvable', async () => {
    await assert.rejects(assertDeliverableUrl('http://8.8.8.8/hook', strict), refusal('webhook_url_not_https'));
    await assert.rejects(assertDeliverableUrl('ftp://example.com/hook', strict), refusal('webhook_url_invalid'));
    await assert.rejects(assertDeliverableUrl('not a url', strict), refusal('webhook_url_invalid'));
    await assert.rejects(assertDeliverableUrl('https://user:pw@8.8.8.8/hook', strict), refusal('webhook_url_invalid'));
    await assert.rejects(assertDeliverableUrl('https://127.0.0.1/hook', strict), refusal('webhook_url_not_public'));
    await assert.rejects(
      assertDeliverableUrl('https://[::ffff:7f00:1]/hook', strict),
      refusal('webhook_url_not_public'),
    );
    await assert.rejects(
      assertDeliverableUrl('https://169.254.169.254/latest', strict),
      refusal('webhook_url_not_public'),
    );
    await assert.rejects(assertDeliverableUrl('https://localhost/hook', strict), refusal('webhook_url_not_public'));
    await assert.rejects(
      assertDeliverableUrl('https://no-such-host.invalid/hook', strict),
      refusal('webhook_url_unresolvable'),
    );
    assert.equal((await assertDeliverableUrl('https://8.8.8.8/hook', strict)).href, 'https://8.8.8.8/hook');
  });

  it('allows http and private addresses when the operator says so', async () => {
    assert.equal((await assertDeliverableUrl('http://127.0.0.1:8080/hook', { allowPrivate: true })).port, '8080');
  });

  it('checks the address a delivery connects to, so a name that now resolves to loopback is refused', async () => {
    const lookup = checkedLookup(strict);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup('localhost', {}, (e) => resolve(e)),
    );
    assert.equal(error?.code, 'webhook_url_not_public');
    const allowed = await new Promise<unknown>((resolve) =>
      checkedLookup({ allowPrivate: true })('localhost', { all: true }, (_e, addresses) => resolve(addresses)),
    );
    assert.ok(Array.isArray(allowed) && allowed.length > 0);

    // A receiver really listening on loopback gets nothing: the connection is refused before it is made.
    let requests = 0;
    const server = createServer((_req, res) => (requests++, res.end())).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const send = (url: string, allowPrivate: boolean) =>
        sendWebhook({
          url,
          id: 'msg_1',
          payload: '{}',
          secrets: ['whsec_' + Buffer.alloc(32, 1).toString('base64')],
          timeoutMs: 2000,
          allowPrivate,
        });
      const byName = await send(`https://localhost:${port}/hook`, false);
      assert.equal(byName.status, null);
      assert.match(byName.error!, /address not allowed/);
      const byAddress = await send(`https://127.0.0.1:${port}/hook`, false);
      assert.match(byAddress.error!, /address not allowed/);
      assert.equal(requests, 0);
      const allowed = await send(`http://localhost:${port}/hook`, true);
      assert.equal(allowed.status, 200);
      assert.equal(requests, 1);
    } finally {
      server.close();
    }
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    let followed = 0;
    const server = createServer((req, res) => {
      if (req.url === '/moved') return (followed++, res.end());
      res.writeHead(307, { location: '/moved' }).end();
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const response = await sendWebhook({
        url: `http://127.0.0.1:${port}/hook`,
        id: 'msg_1',
        payload: '{}',
        secrets: ['whsec_' + Buffer.alloc(32, 1).toString('base64')],
        timeoutMs: 2000,
        allowPrivate: true,
      });
      assert.equal(response.status, 307);
      assert.equal(response.error, 'HTTP 307');
      assert.equal(followed, 0);
    } finally {
      server.close();
    }
  });
});
