// The bench's sync-pull-page (issue 38): every connection sends the full sync's pages in turn, each from its own place,
// so that a run of a few hundred requests a connection reads pages of every kind, not the first task pages only
// (scripts/bench/scenarios.ts connectionRequests).
import assert from 'node:assert/strict';
import { connectionRequests, scenarios } from '../../scripts/bench/scenarios.ts';
import type { Credentials } from '../../scripts/bench/setup.ts';
import { SYNC_PAGE } from '../../scripts/bench/sync-student.ts';

describe("the bench's sync pages", () => {
  const pageTokens = ['*', ...Array.from({ length: 350 }, (_, i) => `page-${i + 1}`)];
  const credentials: Credentials = {
    apiKey: 'key',
    studentToken: 'student',
    studentId: 'student-id',
    cardId: '00000000-0000-0000-0000-000000000000',
    students: [],
    syncStudentToken: 'sync-student',
    syncPageTokens: pageTokens,
  };
  const pages = scenarios(2026, credentials).find((s) => s.name === 'sync-pull-page')!;

  it('gives each connection every page once, the first connection from the first page, the others spread over the sync', () => {
    const lists = connectionRequests(pages, credentials, 10);
    assert.equal(lists.length, 10);
    const paths = pages.paths!;
    for (const list of lists) assert.deepEqual([...list.map((r) => r.path)].sort(), [...paths].sort());
    assert.equal(lists[0]![0]!.path, paths[0]);
    const starts = lists.map((list) => paths.indexOf(list[0]!.path));
    assert.deepEqual(starts, [0, 35, 70, 105, 140, 175, 210, 245, 280, 315]);
    // Each list goes on in the sync's order from its start, round to the first page.
    const fourth = lists[3]!.map((r) => r.path);
    assert.deepEqual(fourth.slice(0, 2), [paths[105], paths[106]]);
    assert.deepEqual(fourth.slice(-1), [paths[104]]);
    for (const list of lists)
      for (const request of list) assert.equal(request.headers.authorization, 'Bearer sync-student');
  });

  it('is judged against a list page of its size, as its student, in the same rounds (its twin)', () => {
    const twin = scenarios(2026, credentials).find((s) => s.name === pages.twin)!;
    assert.equal(twin.name, 'list-tasks-20');
    assert.deepEqual(
      [twin.method, twin.path, twin.credential],
      ['GET', `/api/tasks?limit=${SYNC_PAGE}`, pages.credential],
    );
    for (const path of pages.paths!) assert.match(path, new RegExp(`^/api/sync\\?limit=${SYNC_PAGE}&`));
  });

  it('keeps one list for a scenario with one path', () => {
    const list = scenarios(2026, credentials).find((s) => s.name === 'list-tasks')!;
    assert.deepEqual(
      connectionRequests(list, credentials, 10).map((l) => l.map((r) => r.path)),
      [['/api/tasks?limit=20']],
    );
  });
});
