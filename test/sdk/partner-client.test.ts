// The SDK's partner client against the real service over HTTP: typed requests in, typed data or problems out,
// every response checked against the spec on the way (checked-fetch.ts).
import assert from 'node:assert/strict';
import { createPartnerClient, type PartnerSchema } from '../../sdk/index.ts';
import { issueTestKey } from '../support/partner-app.ts';
import { contractCheckedFetch } from './checked-fetch.ts';
import { listeningApp, OUTLASTING_KEEP_ALIVE } from '../support/listening.ts';

describe('SDK: createPartnerClient', () => {
  let service: Awaited<ReturnType<typeof listeningApp>>;
  let partner: ReturnType<typeof createPartnerClient>;
  let key: string;

  before(async () => {
    service = await listeningApp({}, OUTLASTING_KEEP_ALIVE);
    key = (await issueTestKey()).key;
    partner = createPartnerClient({ baseUrl: service.baseUrl, apiKey: key, fetch: await contractCheckedFetch() });
  });
  after(() => service?.close());

  it('getHealth: sends the key and reads the contract version and the key prefix', async () => {
    const { data, error, response } = await partner.GET('/api/v1/health');
    assert.equal(error, undefined);
    assert.equal(data?.status, 'ok');
    assert.equal(data?.your_key, key.slice(0, 'svc_live_'.length + 8));
    assert.match(String(response.headers.get('ratelimit-policy')), /"minute"/);
  });

  it('listUniversities and getUniversity: query and path parameters, typed results', async () => {
    const list = await partner.GET('/api/v1/universities', { params: { query: { country_code: 'kz', limit: 3 } } });
    const universities: PartnerSchema<'University'>[] = list.data ?? [];
    assert.equal(universities.length, 3);
    assert.ok(universities.every((u) => u.country === 'KZ'));
    const first = universities[0]!;
    const one = await partner.GET('/api/v1/universities/{uni_id}', { params: { path: { uni_id: first.id } } });
    assert.equal(one.data?.id, first.id);
    assert.equal(one.data?.name, first.name);
  });

  it('getGlobalLeaderboard and listHolidays', async () => {
    const board = await partner.GET('/api/v1/leaderboards/global', { params: { query: { limit: 5 } } });
    assert.ok(board.data && board.data.length > 0 && board.data.length <= 5);
    const xp = board.data.map((entry) => entry.xp);
    assert.deepEqual(
      xp,
      [...xp].sort((a, b) => b - a),
    );
    const holidays = await partner.GET('/api/v1/holidays/{country_code}', {
      params: { path: { country_code: 'KZ' }, query: { year: 2026 } },
    });
    assert.ok(holidays.data?.some((h) => h.on_date.startsWith('2026-')));
  });

  it('returns problems as typed errors: 404 for an unknown university, 400 for a bad limit', async () => {
    const missing = await partner.GET('/api/v1/universities/{uni_id}', {
      params: { path: { uni_id: '00000000-0000-4000-8000-000000000000' } },
    });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.data, undefined);
    assert.equal(missing.error?.code, 'not_found');
    const bad = await partner.GET('/api/v1/universities', { params: { query: { limit: 500 } } });
    assert.equal(bad.response.status, 400);
    assert.ok(
      bad.error?.errors?.some((e) => e.path === 'query.limit'),
      JSON.stringify(bad.error),
    );
  });

  it('a client with an unknown key gets 401 unauthorized', async () => {
    const stranger = createPartnerClient({
      baseUrl: service.baseUrl,
      apiKey: 'svc_live_' + 'x'.repeat(32),
      fetch: await contractCheckedFetch(),
    });
    const { error, response } = await stranger.GET('/api/v1/stats');
    assert.equal(response.status, 401);
    assert.equal(error?.code, 'unauthorized');
  });
});
