// The general surface's version is real: a released snapshot locks it as partner v1 is locked (the same scripts,
// `--surface general`), and every response says which version produced it (`API-Version`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import supertest from 'supertest';
import { currentSpecOf, readJson, releasedDirOf, releasedVersions } from '../../../scripts/spec-diff.ts';
import { generalApp } from '../../support/general-app.ts';
import { runNode } from '../../support/run-node.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const current = readJson(currentSpecOf('general'));

describe('general surface version', function () {
  // Runs of spec:breaking, fixed work each (run-node.ts): given the run's bound and a margin.
  this.timeout(300_000);

  it('has a released snapshot of its current major version', () => {
    const latest = releasedVersions(releasedDirOf('general')).at(-1);
    assert.ok(latest, 'spec/general/released/ holds a snapshot');
    assert.equal(latest.split('.')[0], current.info.version.split('.')[0]);
  });

  describe('spec:breaking --surface general', () => {
    let scratch: string;
    beforeEach(() => (scratch = mkdtempSync(join(tmpdir(), 'general-lock-'))));
    afterEach(() => rmSync(scratch, { recursive: true, force: true }));
    const gate = async (spec: object) => {
      const file = join(scratch, 'openapi.json');
      writeFileSync(file, JSON.stringify(spec));
      return runNode(['--import', 'tsx', 'scripts/spec-breaking.ts', '--surface', 'general', '--current', file], root);
    };

    it('passes the current spec', async () => {
      const run = await gate(current);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /No breaking change against the general surface/);
    });

    it('fails a deliberately breaking change with a message that names it', async () => {
      const broken = structuredClone(current);
      const profile = broken.components.schemas.UserProfile;
      delete profile.properties.nickname;
      profile.required = profile.required.filter((name: string) => name !== 'nickname');
      const run = await gate(broken);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stderr, /The general spec breaks the general surface as released in 1\.0\.0/);
      assert.match(run.stderr, /- removed response field `nickname` of getMyProfile 200\n/);
    });
  });

  it('sends API-Version with the spec version on every general response, errors included', async () => {
    const { app, newStudent } = await generalApp();
    const student = await newStudent({ scopes: ['profile:read'] });
    const responses = [
      await supertest(app).get('/api/users/me').set(student.headers).expect(200),
      await supertest(app).get('/api/users/me').expect(401),
      await supertest(app).get('/api/tasks').set(student.headers).expect(403),
      await supertest(app).get('/api/no-such-thing').set(student.headers).expect(404),
    ];
    for (const res of responses) assert.equal(res.headers['api-version'], current.info.version, `on a ${res.status}`);
    // Partner v1 reports its own version elsewhere (GET /api/v1/health); the header is the general surface's.
    assert.equal((await supertest(app).get('/api/v1/health')).headers['api-version'], undefined);
  });
});
