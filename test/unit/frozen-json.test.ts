// A frozen body is sent as res.json sends it (bytes, Content-Type, Content-Length, ETag, 304, HEAD), from JSON
// serialized once per body object.
import assert from 'node:assert/strict';
import etag from 'etag';
import express from 'express';
import supertest from 'supertest';
import { isFrozenBody, sendFrozenJson } from '../../server/http/frozen-json.ts';
import { sendJson, weakEtag } from '../../server/http/send-body.ts';

const frozen = Object.freeze([Object.freeze({ id: 1, name: 'Ünïcode — 大学' }), Object.freeze({ id: 2, name: 'b' })]);

function app(body: object) {
  const served = express();
  served.get('/json', (_req, res) => void res.json(body));
  served.get('/frozen', (req, res) => sendFrozenJson(req, res, 200, body));
  served.get('/sent', (req, res) => sendJson(req, res, 200, body));
  return supertest(served);
}

describe('sendJson and sendFrozenJson', () => {
  for (const path of ['/sent', '/frozen']) {
    it(`${path}: sends what res.json sends`, async () => {
      const api = app(frozen);
      const [json, sent] = [await api.get('/json').expect(200), await api.get(path).expect(200)];
      for (const header of ['content-type', 'content-length', 'etag'])
        assert.equal(sent.headers[header], json.headers[header], header);
      assert.equal(sent.text, json.text);
      assert.deepEqual(sent.body, frozen);
    });

    it(`${path}: answers a matching If-None-Match with 304 and no body, and HEAD without a body`, async () => {
      const api = app(frozen);
      const { etag } = (await api.get(path).expect(200)).headers;
      const unchanged = await api
        .get(path)
        .set('If-None-Match', etag as string)
        .expect(304);
      assert.equal(unchanged.text ?? '', '');
      assert.equal(unchanged.headers.etag, etag);
      assert.equal(unchanged.headers['content-type'], undefined);
      await api.get(path).set('If-None-Match', 'W/"other"').expect(200);
      const head = await api.head(path).expect(200);
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(JSON.stringify(frozen))));
      assert.equal(head.text ?? '', '');
    });
  }

  it('serializes each body object on its own', async () => {
    const other = Object.freeze([Object.freeze({ id: 3 })]);
    const [a, b] = [await app(frozen).get('/frozen'), await app(other).get('/frozen')];
    assert.notEqual(a.headers.etag, b.headers.etag);
    assert.deepEqual(b.body, other);
  });

  it('takes only frozen objects as such', () => {
    assert.equal(isFrozenBody(frozen), true);
    assert.equal(isFrozenBody([1]), false);
    assert.equal(isFrozenBody(null), false);
    assert.equal(isFrozenBody(Object.freeze('text')), false);
  });
});

describe('weakEtag', () => {
  it("is the etag package's weak ETag of the bytes, empty and multi-byte bodies included", () => {
    const texts = ['', '{}', 'a', JSON.stringify(frozen), 'x'.repeat(70_000), '\u2028\ud83d\ude00 大学'];
    for (const text of texts) {
      const bytes = Buffer.from(text, 'utf8');
      assert.equal(weakEtag(bytes), etag(bytes, { weak: true }), JSON.stringify(text.slice(0, 20)));
    }
  });
});
