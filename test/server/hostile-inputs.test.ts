// The inputs the issue-8 audit found answering 500, each now a refusal: NUL characters (PostgreSQL cannot store
// them) in any text, dates PostgreSQL or JavaScript cannot represent, and bodies that do not decode.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { encodeCursor } from '../../server/contract/cursor.ts';
import { contractClient } from '../support/contract.ts';
import { generalApp, type Student } from '../support/general-app.ts';
import { registerTestClient } from '../support/oauth-flow.ts';

type General = Awaited<ReturnType<typeof generalApp>>;

const NUL = '\u0000';

/** Each stored text the audit tried, as the request that stores it. */
const STORED_TEXTS: Array<{ field: string; send: (g: General, s: Student) => Promise<request.Response> }> = [
  {
    field: 'requestBody.title',
    send: ({ api }, s) =>
      api
        .post('/api/tasks')
        .set(s.headers)
        .send({ title: `a${NUL}`, due_at: '2026-11-23T09:00:00Z', course: null }),
  },
  {
    field: 'requestBody.course',
    send: ({ api }, s) =>
      api
        .post('/api/tasks')
        .set(s.headers)
        .send({ title: 'a', due_at: '2026-11-23T09:00:00Z', course: `a${NUL}` }),
  },
  {
    field: 'requestBody.notes',
    send: ({ api }, s) =>
      api
        .post('/api/tasks')
        .set(s.headers)
        .send({ title: 'a', due_at: '2026-11-23T09:00:00Z', course: null, notes: NUL }),
  },
  {
    field: 'requestBody.title',
    send: ({ api }, s) =>
      api
        .post('/api/flashcards/decks')
        .set(s.headers)
        .send({ title: `deck${NUL}` }),
  },
  {
    field: 'requestBody.front',
    send: async ({ api }, s) => {
      const deck = await api.post('/api/flashcards/decks').set(s.headers).send({ title: 'deck' }).expect(201);
      return api
        .post(`/api/flashcards/decks/${deck.body.id}/cards`)
        .set(s.headers)
        .send({ front: `q${NUL}`, back: 'a' });
    },
  },
  {
    field: 'requestBody.subject',
    send: ({ api }, s) =>
      api
        .post('/api/exams')
        .set(s.headers)
        .send({ subject: `x${NUL}`, exam_date: '2026-12-20' }),
  },
  {
    field: 'requestBody.message',
    send: ({ api }, s) =>
      api
        .post('/api/ai/chat')
        .set(s.headers)
        .send({ message: `hi${NUL}` }),
  },
  {
    field: 'requestBody.bio',
    send: ({ api }, s) =>
      api
        .patch('/api/users/me')
        .set(s.headers)
        .send({ bio: `me${NUL}` }),
  },
  {
    field: 'requestBody.name',
    send: ({ api }, s) =>
      api
        .post('/api/users/me/api-keys')
        .set(s.headers)
        .send({ name: `key${NUL}` }),
  },
  { field: 'query.course', send: ({ api }, s) => api.get('/api/tasks?course=a%00').set(s.headers) },
];

function assertRefused(res: request.Response, field: string, message: RegExp) {
  assert.equal(res.status, 400, `${res.status} ${JSON.stringify(res.body)}`);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  assert.equal(res.body.code, 'invalid_request');
  // The pattern and the format of a date may both name the field.
  assert.deepEqual([...new Set(res.body.errors.map((e: { path: string }) => e.path))], [field]);
  assert.match(res.body.errors[0].message, message);
}

describe('hostile inputs: no 5xx', () => {
  let general: General;
  let student: Student;
  before(async () => {
    general = await generalApp();
    student = await general.newStudent();
  });

  describe('a NUL character in any text is a 400 naming the field', () => {
    for (const { field, send } of STORED_TEXTS) {
      it(`in ${field} (${send.toString().match(/'(\/api[^']*)'/)?.[1] ?? ''})`, async () => {
        assertRefused(await send(general, student), field, /NUL/);
      });
    }

    it('in a key of a JSON body', async () => {
      const res = await general.api
        .post('/api/tasks')
        .set(student.headers)
        .send({ [`title${NUL}`]: 'x', title: 'a', due_at: '2026-11-23T09:00:00Z', course: null });
      assertRefused(res, `requestBody.title${NUL}`.replace(NUL, '\\u0000'), /NUL/);
    });

    it('in a path segment', async () => {
      assertRefused(await general.api.get('/api/tasks/%00').set(student.headers), 'path.id', /NUL/);
    });

    it('after authentication, as validation is (401 first)', async () => {
      const res = await request(general.app).post('/api/tasks').send({ title: NUL });
      assert.equal(res.status, 401, res.text);
    });
  });

  it('a lone surrogate is a 400 naming the field (it would be stored as U+FFFD, silently)', async () => {
    const res = await general.api
      .post('/api/tasks')
      .set(student.headers)
      .set('Content-Type', 'application/json')
      .send('{"title":"a\\ud800","due_at":"2026-11-23T09:00:00Z","course":null}');
    assertRefused(res, 'requestBody.title', /surrogate/);
  });

  describe('dates outside 0001-01-01 to 9999-12-31 (UTC), and leap seconds, are 400s', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['2026-12-31T23:59:60Z', 'requestBody.due_at', /date-time|pattern/],
      ['0000-06-01T09:00:00Z', 'requestBody.due_at', /date-time|pattern/],
      ['9999-12-31T23:00:00-05:00', 'requestBody.due_at', /date-time|pattern/],
      ['0001-01-01T00:30:00+01:00', 'requestBody.due_at', /date-time|pattern/],
      ['10000-01-01T00:00:00Z', 'requestBody.due_at', /date-time|pattern/],
    ];
    for (const [due_at, field, message] of cases) {
      it(`due_at ${due_at}`, async () => {
        assertRefused(
          await general.api.post('/api/tasks').set(student.headers).send({ title: 'a', due_at, course: null }),
          field,
          message,
        );
      });
    }

    it('the range ends are accepted and echoed in RFC 3339 form', async () => {
      for (const due_at of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
        const res = await general.api
          .post('/api/tasks')
          .set(student.headers)
          .send({ title: 'a', due_at, course: null })
          .expect(201);
        assert.equal(res.body.due_at, new Date(due_at).toISOString());
        assert.match(res.body.due_at, /^\d{4}-/);
      }
      const exam = await general.api
        .post('/api/exams')
        .set(student.headers)
        .send({ subject: 'x', exam_date: '9999-12-31' })
        .expect(201);
      assert.equal(exam.body.exam_date, '9999-12-31');
    });

    it('exam_date 0000-01-01', async () => {
      assertRefused(
        await general.api.post('/api/exams').set(student.headers).send({ subject: 'x', exam_date: '0000-01-01' }),
        'requestBody.exam_date',
        /date|pattern/,
      );
    });

    for (const [query, field] of [
      ['week=0000-W01', 'query.week'],
      ['week=2026-W54', 'query.week'],
      ['week=2026-W99', 'query.week'],
      ['week=2027-W53', 'query.week'],
      ['start=0000-01-01', 'query.start'],
      ['start=9999-12-31', 'query.start'],
      ['week=9999-W52', 'query.week'],
    ] as const) {
      it(`the schedule with ${query}`, async () => {
        assertRefused(await general.api.get(`/api/schedule?${query}`).set(student.headers), field, /./);
      });
    }

    it('the schedule of the first and last weeks of the range', async () => {
      const schedule = async (query: string) => {
        const res = await general.api.get(`/api/schedule?${query}`).set(student.headers);
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        return res.body;
      };
      // 9999-12-31 is a Friday: 9999-W52 runs from 9999-12-27 into the year 10000.
      assert.equal((await schedule('week=9999-W51')).end_date, '9999-12-26');
      assert.equal((await schedule('start=9999-12-26')).week, '9999-W51');
      assert.equal((await schedule('start=0001-01-01')).week, '0001-W01');
      assert.equal((await schedule('week=2032-W53')).start_date, '2032-12-27');
    });

    it('an exams cursor that carries 0000-01-01', async () => {
      assertRefused(
        await general.api.get(`/api/exams?cursor=${encodeCursor(['0000-01-01', randomUUID()])}`).set(student.headers),
        'query.cursor',
        /cursor/,
      );
    });

    it('a tasks cursor that carries a year 10000 instant', async () => {
      assertRefused(
        await general.api
          .get(`/api/tasks?cursor=${encodeCursor(['+010000-01-01T00:00:00.000Z', randomUUID()])}`)
          .set(student.headers),
        'query.cursor',
        /cursor/,
      );
    });
  });

  describe('bodies that do not decode are 4xx problems', () => {
    for (const credentials of [true, false]) {
      it(`Content-Encoding: gzip on a plain body (${credentials ? 'with' : 'without'} credentials)`, async () => {
        let call = request(general.app)
          .post('/api/tasks')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', 'gzip');
        if (credentials) call = call.set(student.headers);
        const res = await call.send('{"title":"a","due_at":"2026-11-23T09:00:00Z","course":null}');
        assert.equal(res.status, 400, `${res.status} ${res.text}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      });
    }

    it('a gzip body that decodes is read', async () => {
      const body = gzipSync(JSON.stringify({ title: 'zipped', due_at: '2026-11-23T09:00:00Z', course: null }));
      const res = await request(general.app)
        .post('/api/tasks')
        .set(student.headers)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize((b: Buffer) => b as never)
        .send(body);
      assert.equal(res.status, 201, res.text);
    });

    for (const encoding of ['br', 'zstd', 'compress', 'x-custom']) {
      it(`Content-Encoding: ${encoding} is a 400 problem`, async () => {
        const res = await request(general.app)
          .post('/api/tasks')
          .set(student.headers)
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .send('{}');
        assert.equal(res.status, 400, `${res.status} ${res.text}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      });
    }

    it('an unknown charset is a 400 problem', async () => {
      const res = await request(general.app)
        .post('/api/tasks')
        .set(student.headers)
        .set('Content-Type', 'application/json; charset=x-unknown')
        .send('{}');
      assert.equal(res.status, 400, `${res.status} ${res.text}`);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    });
  });

  describe('OAuth endpoints: a NUL character is refused in their own format', () => {
    let clientId: string;
    before(async () => {
      clientId = (await registerTestClient(['tasks:read'])).client_id;
    });

    it('GET /oauth/authorize?client_id=%00 shows the error page (400)', async () => {
      const res = await request(general.app).get('/oauth/authorize?response_type=code&client_id=%00');
      assert.equal(res.status, 400);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.text, /client_id/);
    });

    for (const field of ['client_id', 'email']) {
      it(`POST /oauth/authorize with NUL in ${field} shows the error page (400)`, async () => {
        const form = {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: 'http://localhost:8080/callback',
          email: 'a@example.com',
          password: 'x',
          [field]: `a${NUL}`,
        };
        const res = await request(general.app).post('/oauth/authorize').type('form').send(form);
        assert.equal(res.status, 400, res.text);
        assert.match(res.text, new RegExp(field));
      });
    }

    for (const [path, field] of [
      ['/oauth/revoke', 'client_id'],
      ['/oauth/revoke', 'token'],
      ['/oauth/token', 'client_id'],
      ['/oauth/token', 'code'],
    ] as const) {
      it(`POST ${path} with NUL in ${field} is an RFC 6749 invalid_request (400)`, async () => {
        const form = {
          grant_type: 'authorization_code',
          client_id: clientId,
          token: 'x',
          code: 'x',
          redirect_uri: 'http://localhost:8080/callback',
          [field]: `a${NUL}`,
        };
        const res = await request(general.app).post(path).type('form').send(form);
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error, 'invalid_request');
        assert.match(res.body.error_description, new RegExp(field));
      });
    }
  });

  it('contract: every refusal above is documented (the contract client checks it)', async () => {
    await contractClient(general.app).get('/api/tasks?course=a%00').set(student.headers).expect(400);
  });
});
