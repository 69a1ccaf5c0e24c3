// The OAuth endpoints' refusals in RFC 6749's own format: a token request that is not a form is invalid_request,
// and a failure on our side is a server_error that tells the client nothing internal (the log has it).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import supertest from 'supertest';
import { connect } from '../../../db/connect.ts';
import { createLogger } from '../../../server/process/logger.ts';
import { newStudentThroughOAuth } from '../../support/general-app.ts';
import { pkcePair, registerTestClient, TEST_REDIRECT_URI } from '../../support/oauth-flow.ts';
import { buildApp } from '../../support/partner-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

function logSink() {
  const lines: string[] = [];
  const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  return { lines, logger: createLogger('info', stream) };
}

/** Fails every insert into one table, as a database that breaks mid-flow would; reads still work. */
function failingInsertsInto(table: string): KyselyPlugin {
  return {
    transformQuery({ node }: { node: RootOperationNode }) {
      const into = node.kind === 'InsertQueryNode' ? node.into?.table.identifier.name : undefined;
      if (into === table) throw new Error(`relation "${table}" is on fire (internal detail)`);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
}

describe('OAuth error responses', () => {
  for (const [what, type, body] of [
    ['a JSON body', 'application/json', JSON.stringify({ grant_type: 'client_credentials', client_id: 'x' })],
    ['a text body', 'text/plain', 'grant_type=client_credentials'],
    ['no body', undefined, undefined],
  ] as const) {
    it(`answers a token request with ${what} 400 invalid_request, never 200`, async () => {
      const request = supertest(await buildApp()).post('/oauth/token');
      if (type) request.set('Content-Type', type);
      const res = await (body === undefined ? request : request.send(body)).expect(400);
      assert.equal(res.body.error, 'invalid_request');
      assert.match(res.body.error_description, /application\/x-www-form-urlencoded/);
      assert.equal(res.headers['cache-control'], 'no-store');
    });
  }

  it('answers a token request whose database is down with temporarily_unavailable (503), no internal text, the cause only in the log', async () => {
    const { lines, logger } = logSink();
    const downDb = connect({ databaseUrl: 'postgres://postgres@127.0.0.1:1/unreachable' });
    try {
      const app = await buildApp({ db: downDb, logger });
      const res = await supertest(app)
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: 'c', client_secret: 's' })
        .expect(503);
      assert.deepEqual(res.body, {
        error: 'temporarily_unavailable',
        error_description: 'The service is temporarily unavailable; try again in 5 seconds.',
      });
      assert.ok(
        lines.some((line) => line.includes('ECONNREFUSED')),
        'the cause is in the log',
      );
    } finally {
      await downDb.destroy();
    }
  });

  it('redirects a sign-in that fails on our side with a generic server_error, the cause only in the log', async () => {
    const { lines, logger } = logSink();
    const { client_id } = await registerTestClient(['profile:read']);
    const student = await newStudentThroughOAuth(await buildApp());
    const app = await buildApp({ db: testDatabase().db.withPlugin(failingInsertsInto('oauth_grants')), logger });
    const res = await supertest(app)
      .post('/oauth/authorize')
      .type('form')
      .send({
        response_type: 'code',
        client_id,
        redirect_uri: TEST_REDIRECT_URI,
        scope: 'profile:read',
        state: 's1',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        email: student.email,
        password: student.password,
        decision: 'allow',
      })
      .expect(303);
    const location = new URL(res.headers.location!);
    assert.equal(location.searchParams.get('error'), 'server_error');
    assert.equal(location.searchParams.get('error_description'), 'The authorization server failed; try again later.');
    assert.equal(location.searchParams.get('state'), 's1');
    assert.ok(
      lines.some((line) => line.includes('is on fire')),
      'the cause is in the log',
    );
  });
});
