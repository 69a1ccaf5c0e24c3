// The partner v1 lock (scripts/spec-breaking.ts, scripts/spec-changelog.ts): every kind of break it promises to
// catch, on edited copies of the released spec; and, end to end, a scratch edit of the YAML in spec/ bundled the way
// `npm run generate` bundles it, judged by the commands CI runs.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  compareSpecs,
  CURRENT_SPEC,
  readJson,
  RELEASED_DIR,
  releasedVersions,
  versionProblems,
} from '../../../scripts/spec-diff.ts';
import { released, unreleasedBody, withUnreleased } from '../../../scripts/spec-changelog-text.ts';
import { runNode } from '../../support/run-node.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const latest = releasedVersions().at(-1)!;
const releasedSpec = readJson(new URL(`openapi-${latest}.json`, RELEASED_DIR));

/** The released spec edited by `edit`, compared with the original. */
function changesAfter(edit: (spec: any) => void) {
  const after = structuredClone(releasedSpec);
  edit(after);
  return compareSpecs(releasedSpec, after);
}
const breaks = (edit: (spec: any) => void) =>
  changesAfter(edit)
    .filter((c) => c.class === 'breaking')
    .map((c) => c.message);
const health = (spec: any) => spec.components.schemas.Health;
const op = (spec: any, path: string) => spec.paths[path].get;

describe('partner v1 lock', () => {
  it('has a released 1.x snapshot, and the current spec keeps every promise of it', () => {
    assert.match(latest, /^1\.\d+\.\d+$/);
    const current = readJson(CURRENT_SPEC);
    assert.deepEqual(
      compareSpecs(releasedSpec, current).filter((c) => c.class === 'breaking'),
      [],
    );
    assert.deepEqual(versionProblems(latest, current.info.version), []);
  });

  describe('names each break', () => {
    const cases: Array<[string, (spec: any) => void, string]> = [
      [
        'a removed response field',
        (s) => delete health(s).properties.your_key,
        'removed response field `your_key` of getHealth 200',
      ],
      [
        'a response field made optional',
        (s) => health(s).required.pop(),
        'response field `rate_limit_per_day` of getHealth 200 is no longer required',
      ],
      [
        'a removed operation',
        (s) => delete s.paths['/api/v1/stats'],
        'removed operation `getStats` (GET /api/v1/stats)',
      ],
      [
        'a moved operation',
        (s) => ((s.paths['/api/v1/statistics'] = s.paths['/api/v1/stats']), delete s.paths['/api/v1/stats']),
        'removed operation `getStats` (GET /api/v1/stats)',
      ],
      [
        'a renamed operation',
        (s) => (op(s, '/api/v1/stats').operationId = 'getStatistics'),
        'renamed operation `getStats` (GET /api/v1/stats) to `getStatistics`',
      ],
      [
        'a removed parameter',
        (s) => op(s, '/api/v1/universities').parameters.pop(),
        'removed query parameter `limit` of listUniversities',
      ],
      [
        'a renamed parameter',
        (s) => (s.components.parameters.Year.name = 'y'),
        'removed query parameter `year` of listHolidays',
      ],
      [
        'a new required parameter',
        (s) =>
          op(s, '/api/v1/universities').parameters.push({
            name: 'q',
            in: 'query',
            required: true,
            schema: { type: 'string' },
          }),
        'added required query parameter `q` of listUniversities',
      ],
      [
        'an optional parameter made required',
        (s) => (s.components.parameters.Year.required = true),
        'query parameter `year` of listHolidays is now required',
      ],
      [
        'a narrowed parameter range',
        (s) => (s.components.parameters.Limit.schema.maximum = 50),
        'changed `maximum` of query parameter `limit` of listUniversities from `100` to `50`',
      ],
      [
        'a narrowed parameter length',
        (s) => (s.components.parameters.Nickname.schema.maxLength = 10),
        'changed `maxLength` of path parameter `nickname` of getPublicUserProfile from `64` to `10`',
      ],
      [
        'a changed response type',
        (s) => (health(s).properties.rate_limit_per_min.type = 'string'),
        'changed type of response field `rate_limit_per_min` of getHealth 200 from `integer` to `string`',
      ],
      [
        'a response field made nullable',
        (s) => (health(s).properties.your_key.type = ['string', 'null']),
        'changed type of response field `your_key` of getHealth 200 from `string` to `["string","null"]`',
      ],
      [
        'a removed enum value',
        (s) => s.components.schemas.AcademicSystem.enum.pop(),
        'removed enum value `ects` of response field `default_academic_system` of getUniversity 200',
      ],
      [
        'a removed response status',
        (s) => delete op(s, '/api/v1/universities').responses['400'],
        'removed response status 400 of listUniversities',
      ],
      [
        'a removed response header',
        (s) => delete op(s, '/api/v1/health').responses['200'].headers.RateLimit,
        'removed response header `RateLimit` of getHealth 200',
      ],
      [
        'a removed way to authenticate',
        (s) => s.security.pop(),
        'removed security requirement `ApiKeyBearer` of the whole API',
      ],
      [
        'a renamed key header',
        (s) => (s.components.securitySchemes.ApiKeyHeader.name = 'X-Key'),
        'changed name of security scheme `ApiKeyHeader` from `X-Service-API-Key` to `X-Key`',
      ],
    ];
    for (const [what, edit, message] of cases) {
      it(what, () => {
        const found = breaks(edit);
        assert.ok(found.includes(message), `expected "${message}" among:\n  ${found.join('\n  ')}`);
      });
    }

    it('a new required request field, a removed request field, a narrowed request type', () => {
      // v1 has no request bodies yet; the rules for them are checked on one added to both sides.
      const withBody = (spec: any, schema: object) =>
        (spec.paths['/api/v1/things'] = {
          post: {
            operationId: 'createThing',
            requestBody: { content: { 'application/json': { schema } } },
            responses: { '201': { description: 'ok' } },
          },
        });
      const before = structuredClone(releasedSpec);
      withBody(before, { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } } });
      const after = structuredClone(releasedSpec);
      withBody(after, {
        type: 'object',
        required: ['c'],
        properties: { a: { type: 'string' }, c: { type: 'string' } },
      });
      const messages = compareSpecs(before, after)
        .filter((c) => c.class === 'breaking')
        .map((c) => c.message);
      for (const expected of [
        'request field `c` of createThing is now required',
        'removed request field `b` of createThing',
        'changed type of request field `a` of createThing from `integer` to `string`',
      ]) {
        assert.ok(messages.includes(expected), `expected "${expected}" among:\n  ${messages.join('\n  ')}`);
      }
    });
  });

  describe('lets compatible changes through, for the changelog', () => {
    it('an added optional response field, a new optional parameter, a widened range, a new operation', () => {
      const changes = changesAfter((s) => {
        health(s).properties.uptime_seconds = { type: 'integer' };
        op(s, '/api/v1/universities').parameters.push({ name: 'q', in: 'query', schema: { type: 'string' } });
        s.components.parameters.Year.schema.maximum = 2200;
        s.paths['/api/v1/cities'] = { get: { ...structuredClone(op(s, '/api/v1/stats')), operationId: 'listCities' } };
      });
      assert.deepEqual(
        changes.filter((c) => c.class === 'breaking'),
        [],
      );
      const messages = changes.map((c) => c.message);
      for (const expected of [
        'added response field `uptime_seconds` of getHealth 200',
        'added optional query parameter `q` of listUniversities',
        'changed `maximum` of query parameter `year` of listHolidays from `2100` to `2200`',
        'added operation `listCities` (GET /api/v1/cities)',
      ]) {
        assert.ok(messages.includes(expected), `expected "${expected}" among:\n  ${messages.join('\n  ')}`);
      }
    });

    it('ignores documentation: descriptions, summaries and examples', () => {
      const changes = changesAfter((s) => {
        health(s).description = 'Reworded.';
        op(s, '/api/v1/stats').summary = 'Reworded';
        op(s, '/api/v1/health').responses['200'].content['application/json'].examples.ok.value.rate_limit_per_min = 61;
      });
      assert.deepEqual(changes, []);
    });

    it('files them under Added, Changed and Deprecated, and a release dates them', () => {
      const changes = changesAfter((s) => {
        health(s).properties.uptime_seconds = { type: 'integer' };
        s.components.parameters.Year.schema.maximum = 2200;
        op(s, '/api/v1/stats').deprecated = true;
      });
      const body = unreleasedBody(changes, '1.0.0');
      assert.match(body, /### Added\n- Added response field `uptime_seconds` of getHealth 200\n/);
      assert.match(
        body,
        /### Changed\n- Changed `maximum` of query parameter `year` of listHolidays from `2100` to `2200`\n/,
      );
      assert.match(body, /### Deprecated\n- Deprecated operation `getStats`\n/);
      const changelog = withUnreleased(
        '# Changelog\n\n## [Unreleased]\n\n## [1.0.0] - 2026-11-22\n\n### Added\n- First.\n',
        body,
      );
      const dated = released(changelog, '1.1.0', '2027-01-02', unreleasedBody([], '1.1.0'));
      assert.match(
        dated,
        /## \[Unreleased\]\n<!--[^\n]*1\.1\.0[^\n]*-->\n\n## \[1\.1\.0\] - 2027-01-02\n\n### Added\n- Added response field `uptime_seconds`/,
      );
      assert.match(dated, /## \[1\.0\.0\] - 2026-11-22\n\n### Added\n- First\.\n$/);
    });
  });

  describe('server-sent events (x-sse-events of the general surface)', () => {
    const general = readJson(new URL('../../../spec/general/released/openapi-1.0.0.json', import.meta.url));
    const chatEvents = (spec: any) => spec.paths['/api/ai/chat'].post.responses['200']['x-sse-events'];
    /** The general spec with its chat's `queued` event schema moved into a component, then edited by `edit`. */
    const queuedInComponent = (edit: (component: any) => void) => {
      const after = structuredClone(general);
      after.components.schemas.MovedQueued = chatEvents(after).queued;
      chatEvents(after).queued = { $ref: '#/components/schemas/MovedQueued' };
      edit(after.components.schemas.MovedQueued);
      return compareSpecs(general, after);
    };

    it('reads an event schema moved into a component, unchanged, as no change', () => {
      assert.deepEqual(
        queuedInComponent(() => undefined),
        [],
      );
    });

    it('still names a field removed from an event schema that lives in a component', () => {
      const changes = queuedInComponent((component) => delete component.properties.position);
      assert.ok(
        changes.some((c) => c.class === 'breaking' && /x-sse-events\.queued\.properties\.position/.test(c.message)),
        JSON.stringify(changes),
      );
    });
  });

  describe('additions the general spec promises in a minor version', () => {
    const general = readJson(new URL('../../../spec/general/released/openapi-1.0.0.json', import.meta.url));
    const classes = (edit: (spec: any) => void) => {
      const after = structuredClone(general);
      edit(after);
      return [...new Set(compareSpecs(general, after).map((c) => c.class))];
    };
    const eventType = (spec: any) => spec.components.schemas.EventType;
    const scopes = (spec: any) => spec.components.securitySchemes.OAuth2.flows.authorizationCode.scopes;

    it('a value of an enum declared open (x-extensible-enum) is compatible; of any other enum it breaks', () => {
      assert.deepEqual(
        classes((s) =>
          Object.assign(eventType(s), { 'x-extensible-enum': true, enum: [...eventType(s).enum, 'room.created'] }),
        ),
        ['non-breaking'],
      );
      assert.ok(classes((s) => eventType(s).enum.push('room.created')).includes('breaking'));
    });

    it('a new kind of webhook and a new scope of an OAuth flow are compatible', () => {
      assert.deepEqual(
        classes((s) => (s.webhooks['room.created'] = s.webhooks['task.created'])),
        ['non-breaking'],
      );
      assert.deepEqual(
        classes((s) => (scopes(s)['rooms:read'] = 'Read rooms.')),
        ['non-breaking'],
      );
    });
  });

  describe('equivalent ways of writing a schema (scripts/spec-canonical.ts), on the general surface', () => {
    const general = readJson(new URL('../../../spec/general/released/openapi-1.0.0.json', import.meta.url));
    const edited = (edit: (spec: any) => void) => {
      const after = structuredClone(general);
      edit(after);
      return compareSpecs(general, after);
    };
    const breaking = (changes: ReturnType<typeof compareSpecs>) =>
      changes.filter((c) => c.class === 'breaking').map((c) => c.message);
    /** `LoopAction.item` (inline, `type: [object, 'null']`) as `oneOf` of a named object and null. */
    const itemNamed = (spec: any) => {
      const { type: _nullable, description, ...object } = spec.components.schemas.LoopAction.properties.item;
      spec.components.schemas.NamedItem = { ...object, type: 'object' };
      spec.components.schemas.LoopAction.properties.item = {
        description,
        oneOf: [{ $ref: '#/components/schemas/NamedItem' }, { type: 'null' }],
      };
    };
    /** The inline variants of the payment callback's `student` as components with descriptions of their own. */
    const payerNamed = (spec: any) => {
      const student = spec.components.schemas.PaymentProviderEvent.properties.data.properties.object.properties.student;
      student.oneOf.forEach(
        (variant: object, i: number) =>
          (spec.components.schemas[`Payer${i}`] = { ...variant, description: `Variant ${i}.` }),
      );
      student.oneOf = student.oneOf.map((_: unknown, i: number) => ({ $ref: `#/components/schemas/Payer${i}` }));
    };

    it('reads a nullable object written as oneOf of a named object and null as no change', () => {
      assert.deepEqual(edited(itemNamed), []);
    });

    it('still names a field removed from that named object', () => {
      const messages = breaking(edited((s) => (itemNamed(s), delete s.components.schemas.NamedItem.properties.title)));
      assert.ok(
        messages.some((m) => /removed response field `next_action\.item\.title` of getTodayLoop 200/.test(m)),
        messages.join('\n'),
      );
    });

    it('reads inline oneOf variants moved into components as no change, and still names a narrowed one', () => {
      assert.deepEqual(breaking(edited(payerNamed)), []);
      const messages = breaking(
        edited((s) => (payerNamed(s), (s.components.schemas.Payer1.properties.email.maxLength = 100))),
      );
      assert.ok(
        messages.some((m) => /maxLength.*student/.test(m)),
        messages.join('\n'),
      );
    });
  });

  it('keeps v1 at major version 1 and never lets info.version go back', () => {
    assert.deepEqual(versionProblems('1.0.0', '1.2.0'), []);
    assert.match(versionProblems('1.2.0', '1.1.9').join(), /lower than the released 1\.2\.0/);
    assert.match(versionProblems('1.0.0', '2.0.0').join(), /leaves major version 1/);
  });

  describe('on a scratch edit of spec/ (as CI judges it)', function () {
    // Up to four tool runs a case, fixed work each (run-node.ts), which a loaded machine stretches.
    this.timeout(600_000);
    let scratch: string;
    beforeEach(() => {
      scratch = mkdtempSync(join(tmpdir(), 'spec-lock-'));
      cpSync(join(root, 'spec'), join(scratch, 'spec'), { recursive: true });
    });
    afterEach(() => rmSync(scratch, { recursive: true, force: true }));

    const editHealthSchema = (edit: (yaml: string) => string) => {
      const file = join(scratch, 'spec/components/schemas/Health.yaml');
      const before = readFileSync(file, 'utf8');
      const after = edit(before);
      assert.notEqual(after, before, 'the scratch edit applies');
      writeFileSync(file, after);
    };
    const bundle = async () => {
      const out = join(scratch, 'openapi.json');
      const run = await runNode(
        [join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'bundle', 'spec/partner-v1/openapi.yaml', '--output', out],
        scratch,
      );
      assert.equal(run.code, 0, run.stderr);
      return out;
    };

    it('fails spec:breaking with a message naming a field removed from a v1 response', async () => {
      editHealthSchema((yaml) =>
        yaml.replace('version, your_key,', 'version,').replace(/  your_key:\n(    .*\n)+/, ''),
      );
      const run = await runNode(['--import', 'tsx', 'scripts/spec-breaking.ts', '--current', await bundle()], root);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stderr, /- removed response field `your_key` of getHealth 200\n/);
    });

    it('passes an added optional field, and spec:changelog writes its line', async () => {
      editHealthSchema(
        (yaml) => yaml + '  uptime_seconds:\n    type: integer\n    description: Seconds since the process started.\n',
      );
      const current = await bundle();
      const check = await runNode(['--import', 'tsx', 'scripts/spec-breaking.ts', '--current', current], root);
      assert.equal(check.code, 0, check.stderr);
      const changelog = join(scratch, 'CHANGELOG.md');
      cpSync(join(root, 'CHANGELOG.md'), changelog);
      const stale = await runNode(
        ['--import', 'tsx', 'scripts/spec-changelog.ts', '--check', '--current', current, '--changelog', changelog],
        root,
      );
      assert.equal(stale.code, 1, 'the committed changelog lacks the new line');
      const write = await runNode(
        ['--import', 'tsx', 'scripts/spec-changelog.ts', '--current', current, '--changelog', changelog],
        root,
      );
      assert.equal(write.code, 0, write.stderr);
      // The line joins whatever the Unreleased section already lists.
      assert.match(
        readFileSync(changelog, 'utf8'),
        /## \[Unreleased\]\n<!--.*-->\n\n### Added\n(- .*\n)*- Added response field `uptime_seconds` of getHealth 200\n/,
      );
      const fresh = await runNode(
        ['--import', 'tsx', 'scripts/spec-changelog.ts', '--check', '--current', current, '--changelog', changelog],
        root,
      );
      assert.equal(fresh.code, 0, fresh.stderr);
    });
  });
});
