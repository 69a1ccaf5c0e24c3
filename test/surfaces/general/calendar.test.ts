// Calendar feeds over HTTP: the management operations (create within the bound, list without secrets, revoke), and
// the feed itself: RFC 5545 that ical.js (Mozilla's parser) reads without a complaint and expands to the same
// occurrences as the service's own walk, in two time zones; ETag and 304; 404 for every dead URL alike.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ICAL from 'ical.js';
import { sql } from 'kysely';
import { holidaysBetween } from '../../../db/queries/holidays.ts';
import { nextOccurrence } from '../../../domain/recurrence.ts';
import { FEED_READS_PER_MINUTE } from '../../../app/general.ts';
import { AUTH_FAILURES_PER_WINDOW } from '../../../server/auth/auth-failure-limit.ts';
import { MAX_FEEDS_PER_STUDENT } from '../../../domain/bounds.ts';
import { generalApp, type Student } from '../../support/general-app.ts';
import { testDatabase } from '../../support/shared-database.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

const pathOf = (url: string) => new URL(url).pathname;

interface FeedChoices {
  include_notes?: boolean;
  kinds?: string[];
  course?: string | null;
  reminders?: Array<{ minutes_before: number }>;
}

async function createFeed(api: Api, student: Student, name = 'Phone', fields: FeedChoices = {}) {
  const created = await api
    .post('/api/users/me/calendar-feeds')
    .set(student.headers)
    .send({ name, ...fields });
  assert.equal(created.status, 201, created.text);
  return created.body as { id: string; prefix: string; url: string; webcal_url: string };
}

/**
 * The calendar's components as ical.js reads them. ical.js has no warnings channel: it throws on what it cannot read
 * and quietly treats a TZID without its VTIMEZONE as floating time. So this fails on a throw, on any console output
 * while parsing and expanding, and on a TZID that names no VTIMEZONE of the calendar.
 */
function parseStrictly(text: string) {
  const complaints: unknown[] = [];
  const original = { warn: console.warn, error: console.error, log: console.log };
  console.warn = (...args: unknown[]) => complaints.push(args);
  console.error = (...args: unknown[]) => complaints.push(args);
  console.log = (...args: unknown[]) => complaints.push(args);
  try {
    const calendar = new ICAL.Component(ICAL.parse(text));
    const zones = calendar.getAllSubcomponents('vtimezone').map((zone) => String(zone.getFirstPropertyValue('tzid')));
    for (const component of calendar.getAllSubcomponents('vevent')) {
      for (const property of component.getAllProperties()) {
        const tzid = property.getParameter('tzid');
        if (tzid)
          assert.ok(zones.includes(String(tzid)), `${property.name} names TZID ${tzid}, which has no VTIMEZONE`);
      }
    }
    for (const zone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(zone);
    const events = calendar.getAllSubcomponents('vevent').map((component) => new ICAL.Event(component));
    const expanded = new Map<string, Date[]>();
    for (const event of events) {
      const dates: Date[] = [];
      const iterator = event.iterator();
      for (let next = iterator.next(); next && dates.length < 20; next = iterator.next()) dates.push(next.toJSDate());
      expanded.set(event.uid, dates);
    }
    assert.deepEqual(complaints, [], 'ical.js complained');
    return { calendar, events, expanded };
  } finally {
    Object.assign(console, original);
  }
}

/** The service's own walk of a series (the one that creates each next occurrence when one is closed). */
function serviceWalk(rule: string, start: Date, timeZone: string, max: number): Date[] {
  const dates = [start];
  for (
    let next = nextOccurrence(rule, start, start, timeZone);
    next && dates.length < max;
    next = nextOccurrence(rule, start, next, timeZone)
  )
    dates.push(next);
  return dates;
}

describe('calendar feeds', () => {
  it('creates a feed whose URL is shown once, lists it without the secret, and revokes it', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const created = await api
      .post('/api/users/me/calendar-feeds')
      .set(alice.headers)
      .send({ name: 'Phone' })
      .expect(201);
    assert.equal(created.headers['cache-control'], 'no-store');
    const { id, prefix, url, webcal_url } = created.body;
    assert.match(
      url,
      /^https?:\/\/[^/]+(\/[^/]+)*\/api\/calendar\/scf_[0-9A-Za-z]{32}\.ics$/,
      'the shape the spec describes',
    );
    assert.ok(pathOf(url).startsWith(`/api/calendar/${prefix}`), 'the prefix starts the token');
    assert.equal(
      webcal_url,
      url.replace(/^https?:/, 'webcal:'),
      'the webcal URL is the same URL with the scheme swapped',
    );

    const list = await api.get('/api/users/me/calendar-feeds').set(alice.headers).expect(200);
    assert.deepEqual(
      list.body.data.map((feed: { id: string }) => feed.id),
      [id],
    );
    const token = pathOf(url).slice('/api/calendar/'.length, -'.ics'.length);
    assert.ok(!JSON.stringify(list.body).includes(token), 'the list never shows the token');
    assert.equal(list.body.data[0].last_used_at, null);
    const stored = await testDatabase()
      .db.selectFrom('calendar_feeds')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(token), 'only a hash of the token is stored');

    const feed = await api.get(pathOf(url)).expect(200);
    assert.match(String(feed.headers['content-type']), /^text\/calendar/);
    assert.equal(feed.headers['cache-control'], 'private, max-age=900');
    assert.notEqual(
      (await api.get('/api/users/me/calendar-feeds').set(alice.headers).expect(200)).body.data[0].last_used_at,
      null,
      'a read is recorded',
    );

    await api.delete(`/api/users/me/calendar-feeds/${id}`).set(alice.headers).expect(204);
    const revoked = await api.get(pathOf(url)).expect(404);
    const unknown = await api.get('/api/calendar/scf_00000000000000000000000000000000.ics').expect(404);
    assert.equal(revoked.body.detail, unknown.body.detail, 'a revoked feed answers exactly like an unknown one');
    await api.delete(`/api/users/me/calendar-feeds/${id}`).set(alice.headers).expect(404);
    assert.deepEqual((await api.get('/api/users/me/calendar-feeds').set(alice.headers).expect(200)).body.data, []);
  });

  it('refuses what it must: credentials, scopes, malformed input', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, noSchedule, noKeys] = await Promise.all([
      newStudent(),
      newStudent({ scopes: ['keys:manage'] }),
      newStudent({ scopes: ['schedule:read', 'profile:read'] }),
    ]);
    await api.get('/api/users/me/calendar-feeds').expect(401);
    await api.post('/api/users/me/calendar-feeds').send({ name: 'x' }).expect(401);
    await api.delete('/api/users/me/calendar-feeds/9f0e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f').expect(401);
    for (const [student, request] of [
      [noKeys, api.get('/api/users/me/calendar-feeds')],
      [noSchedule, api.post('/api/users/me/calendar-feeds').send({ name: 'x' })],
      [noKeys, api.delete('/api/users/me/calendar-feeds/9f0e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f')],
    ] as const) {
      const res = await request.set(student.headers).expect(403);
      assert.equal(res.body.code, 'insufficient_scope');
    }
    await api.post('/api/users/me/calendar-feeds').set(alice.headers).send({ name: '' }).expect(400);
    await api
      .get('/api/users/me/calendar-feeds')
      .set({ ...alice.headers, 'x-service-api-key': 'svc_live_x' })
      .expect(400);
    await api.delete('/api/users/me/calendar-feeds/not-a-uuid').set(alice.headers).expect(400);
    await api.get('/api/calendar/not-a-token!.ics').expect(400);
    // A token of the wrong shape (here an API key's) is refused by the spec's pattern, before any lookup.
    await api.get('/api/calendar/svc_live_0123456789.ics').expect(400);
  });

  it('keeps students apart: another student can neither see, revoke nor read into a feed', async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const feed = await createFeed(api, alice);
    await api
      .post('/api/tasks')
      .set(bob.headers)
      .send({ title: 'Bob’s secret task', due_at: new Date(Date.now() + 86_400_000).toISOString(), course: null })
      .expect(201);
    await api
      .post('/api/tasks')
      .set(alice.headers)
      .send({ title: 'Alice’s task', due_at: new Date(Date.now() + 86_400_000).toISOString(), course: null })
      .expect(201);
    assert.deepEqual((await api.get('/api/users/me/calendar-feeds').set(bob.headers).expect(200)).body.data, []);
    const others = await api.delete(`/api/users/me/calendar-feeds/${feed.id}`).set(bob.headers).expect(404);
    const unknown = await api
      .delete('/api/users/me/calendar-feeds/9f0e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f')
      .set(bob.headers)
      .expect(404);
    assert.equal(others.body.detail, unknown.body.detail);
    const text = (await api.get(pathOf(feed.url)).expect(200)).text;
    assert.match(text, /SUMMARY:Alice’s task/);
    assert.doesNotMatch(text, /Bob/);
  });

  it(`allows ${MAX_FEEDS_PER_STUDENT} feeds per student: one more is 409 calendar_feed_limit_reached, until one is revoked`, async () => {
    const { api, newStudent } = await generalApp();
    const [alice, bob] = await Promise.all([newStudent(), newStudent()]);
    const feeds = [];
    for (let i = 0; i < MAX_FEEDS_PER_STUDENT; i++) feeds.push(await createFeed(api, alice, `device ${i}`));
    const refused = await api
      .post('/api/users/me/calendar-feeds')
      .set(alice.headers)
      .send({ name: 'one more' })
      .expect(409);
    assert.equal(refused.body.code, 'calendar_feed_limit_reached');
    await createFeed(api, bob); // the bound is per student
    await api.delete(`/api/users/me/calendar-feeds/${feeds[0]!.id}`).set(alice.headers).expect(204);
    await createFeed(api, alice, 'replacement');
  });

  it('answers 304 to the ETag while nothing changed, and a new calendar once something did', async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent({ time_zone: 'Europe/Berlin' });
    const feed = await createFeed(api, alice);
    await api
      .post('/api/tasks')
      .set(alice.headers)
      .send({ title: 'Essay', due_at: '2027-01-15T10:00:00Z', course: 'History' })
      .expect(201);
    const first = await api.get(pathOf(feed.url)).expect(200);
    const again = await api.get(pathOf(feed.url)).expect(200);
    assert.equal(again.headers.etag, first.headers.etag, 'the same data gives the same bytes');
    const notModified = await api.get(pathOf(feed.url)).set('If-None-Match', String(first.headers.etag)).expect(304);
    assert.equal(notModified.text, '');
    assert.equal(notModified.headers['cache-control'], 'private, max-age=900');
    await api
      .post('/api/exams')
      .set(alice.headers)
      .send({ subject: 'Calculus I', exam_date: '2027-01-20' })
      .expect(201);
    const changed = await api.get(pathOf(feed.url)).set('If-None-Match', String(first.headers.etag)).expect(200);
    assert.notEqual(changed.headers.etag, first.headers.etag);
    assert.match(changed.text, /SUMMARY:Exam: Calculus I/);
  });

  it('serves recurring tasks in two time zones that ical.js expands exactly as the service walks them', async () => {
    const { api, newStudent } = await generalApp();
    const berlin = await newStudent({ time_zone: 'Europe/Berlin', country_code: 'kz' });
    const almaty = await newStudent({ time_zone: 'Asia/Almaty', country_code: 'kz' });
    // Weekly on Monday at 09:00 in Berlin, across the spring change (28 March 2027): 08:00Z, then 07:00Z.
    const weekly = {
      title: 'Seminar prep; read ch. 3, 4',
      course: 'Physics',
      due_at: '2027-03-15T08:00:00Z',
      recurrence: 'FREQ=WEEKLY;BYDAY=MO;COUNT=4',
    };
    // Daily at 09:00 in Almaty (+05), to the end of 5 January (a date-only UNTIL includes that whole local day).
    const daily = {
      title: 'Flashcards',
      course: null,
      due_at: '2027-01-01T04:00:00Z',
      recurrence: 'FREQ=DAILY;UNTIL=20270105',
    };
    await api.post('/api/tasks').set(berlin.headers).send(weekly).expect(201);
    await api
      .post('/api/tasks')
      .set(berlin.headers)
      .send({ title: 'One-off', course: null, due_at: '2027-02-01T12:30:00Z' })
      .expect(201);
    await api
      .post('/api/exams')
      .set(berlin.headers)
      .send({ subject: 'Physics', exam_date: '2027-04-20', notes: 'Room 101' })
      .expect(201);
    await api.post('/api/tasks').set(almaty.headers).send(daily).expect(201);

    for (const [student, task, zone] of [
      [berlin, weekly, 'Europe/Berlin'],
      [almaty, daily, 'Asia/Almaty'],
    ] as const) {
      const feed = await createFeed(api, student);
      const text = (await api.get(pathOf(feed.url)).expect(200)).text;
      const { calendar, events, expanded } = parseStrictly(text);
      assert.ok(text.endsWith('END:VCALENDAR\r\n') && !/[^\r]\n/.test(text), 'lines end with CRLF (RFC 5545 §3.1)');
      assert.equal(calendar.getFirstPropertyValue('version'), '2.0');
      for (const event of events) {
        assert.ok(event.uid, 'every event has a UID');
        assert.ok(String(event.component.getFirstPropertyValue('dtstamp')).endsWith('Z'), 'DTSTAMP is UTC');
      }
      const series = events.find((event) => event.isRecurring());
      assert.ok(series, 'the series is one recurring event');
      assert.equal(series.summary, task.title);
      assert.equal(series.startDate.zone.tzid, zone, 'placed in the student’s zone');
      const walked = serviceWalk(task.recurrence, new Date(task.due_at), zone, 20);
      assert.deepEqual(
        expanded.get(series.uid)!.map((d) => d.toISOString()),
        walked.map((d) => d.toISOString()),
        `${zone}: ical.js and the service agree`,
      );

      const holidays = await holidaysBetween(testDatabase().db, 'KZ', '2026-01-01', '2027-12-31');
      assert.ok(holidays.length > 0);
      assert.equal(
        events.filter((event) => event.uid.startsWith('holiday-')).length,
        holidays.length,
        'this and next year’s holidays of the country',
      );
    }
    // Spot-check the DST move itself, not only the agreement.
    const checked = await createFeed(api, berlin, 'check', { include_notes: true });
    const berlinFeed = parseStrictly((await api.get(pathOf(checked.url)).expect(200)).text);
    const weeklyDates = [...berlinFeed.expanded.values()].find((dates) => dates.length === 4)!;
    assert.deepEqual(
      weeklyDates.map((d) => d.toISOString()),
      ['2027-03-15T08:00:00.000Z', '2027-03-22T08:00:00.000Z', '2027-03-29T07:00:00.000Z', '2027-04-05T07:00:00.000Z'],
    );
    const exam = berlinFeed.events.find((event) => event.summary === 'Exam: Physics')!;
    assert.equal(exam.startDate.isDate, true, 'an exam is an all-day event');
    assert.equal(exam.startDate.toString(), '2027-04-20');
    assert.equal(exam.description, 'Room 101');
  });

  it('imports into khal, a calendar client, which shows a series across a DST change at the same local time', async function () {
    if (spawnSync('khal', ['--version']).status !== 0) {
      // Pending where khal is not installed (apt-get install -y khal); CI installs it and demands it.
      if (process.env.REQUIRE_TEST_TOOLS === '1') throw new Error('khal is missing; REQUIRE_TEST_TOOLS=1 demands it');
      this.skip();
    }
    const { api, newStudent } = await generalApp();
    const berlin = await newStudent({ time_zone: 'Europe/Berlin', country_code: 'kz' });
    await api
      .post('/api/tasks')
      .set(berlin.headers)
      .send({
        title: 'Seminar prep',
        course: 'Physics',
        due_at: '2027-03-15T08:00:00Z',
        recurrence: 'FREQ=WEEKLY;BYDAY=MO;COUNT=4',
      })
      .expect(201);
    await api
      .post('/api/exams')
      .set(berlin.headers)
      .send({ subject: 'Physics', exam_date: '2027-04-20', notes: 'Room 101' })
      .expect(201);
    const feed = await createFeed(api, berlin, 'Phone', { reminders: [{ minutes_before: 30 }] });
    const text = (await api.get(pathOf(feed.url)).expect(200)).text;

    const home = mkdtempSync(join(tmpdir(), 'sc-khal-'));
    try {
      mkdirSync(join(home, 'calendar'));
      writeFileSync(join(home, 'feed.ics'), text);
      // khal's own configuration, in a directory of its own: one calendar, the student's zone as the local one.
      writeFileSync(
        join(home, 'config'),
        [
          '[calendars]',
          '[[study]]',
          `path = ${join(home, 'calendar')}`,
          '[locale]',
          'local_timezone = Europe/Berlin',
          'default_timezone = Europe/Berlin',
          'timeformat = %H:%M',
          'dateformat = %Y-%m-%d',
          'longdateformat = %Y-%m-%d',
          'datetimeformat = %Y-%m-%d %H:%M',
          'longdatetimeformat = %Y-%m-%d %H:%M',
        ].join('\n'),
      );
      const khal = (...args: string[]) => {
        const run = spawnSync('khal', ['-c', join(home, 'config'), ...args], {
          encoding: 'utf8',
          env: { ...process.env, HOME: home, XDG_DATA_HOME: home },
        });
        assert.equal(run.status, 0, run.stderr);
        assert.equal(run.stderr, '', 'khal had nothing to complain about');
        return run.stdout;
      };
      khal('import', '--batch', '-a', 'study', join(home, 'feed.ics'));
      const listed = khal('list', '--format', '{start-date} {start-time} {title}', '2026-12-01', '2027-04-21');
      const seminars = listed.split('\n').filter((line) => line.includes('Seminar prep'));
      // 09:00 in Berlin each Monday, before the change (08:00Z) and after it (07:00Z).
      assert.deepEqual(seminars, [
        '2027-03-15 09:00 Seminar prep',
        '2027-03-22 09:00 Seminar prep',
        '2027-03-29 09:00 Seminar prep',
        '2027-04-05 09:00 Seminar prep',
      ]);
      assert.match(listed, /^2027-04-20 +Exam: Physics$/m, 'the exam is an all-day event on its date');
      const holidays = await holidaysBetween(testDatabase().db, 'KZ', '2026-12-01', '2027-04-21');
      assert.ok(holidays.length > 0, 'the window holds holidays of the student’s country');
      for (const holiday of holidays) assert.ok(listed.includes(holiday.name), `${holiday.name} is in the calendar`);
      // khal reads each item's link and its reminder (its alarm symbol); holidays have neither.
      const linked = khal('list', '--format', '{title}|{url}|{alarm-symbol}', '2027-03-15', '2027-04-21');
      const lines = new Set(linked.split('\n').filter((line) => line.includes('|')));
      const origin = new URL(feed.url).origin;
      assert.ok(
        [...lines].some((line) => new RegExp(`^Seminar prep\\|${origin}/api/tasks/[0-9a-f-]{36}\\| ?⏰$`).test(line)),
        [...lines].join('\n'),
      );
      assert.ok(
        [...lines].some((line) => new RegExp(`^Exam: Physics\\|${origin}/api/exams/[0-9a-f-]{36}\\| ?⏰$`).test(line)),
        [...lines].join('\n'),
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it(`reads one URL at most ${FEED_READS_PER_MINUTE} times a minute, counted per URL and against no account`, async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const [busy, quiet] = [await createFeed(api, alice, 'busy'), await createFeed(api, alice, 'quiet')];
    const remaining = async () =>
      String((await api.get('/api/users/me/calendar-feeds').set(alice.headers).expect(200)).headers['ratelimit']).match(
        /"minute"; r=(\d+)/,
      )![1];
    const before = Number(await remaining());
    for (let i = 0; i < FEED_READS_PER_MINUTE; i++) await api.get(pathOf(busy.url)).expect(200);
    assert.equal(Number(await remaining()), before - 1, 'the feed reads spent none of the account’s requests');
    const refused = await api.get(pathOf(busy.url)).expect(429);
    assert.equal(refused.body.code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    await api.get(pathOf(quiet.url)).expect(200);
  });

  it(`counts each unknown feed URL as a failed authentication: after ${AUTH_FAILURES_PER_WINDOW}, the address is refused before any lookup`, async () => {
    const { api, newStudent } = await generalApp();
    const alice = await newStudent();
    const feed = await createFeed(api, alice);
    // Each guess is a URL of its own, so the per-URL limit never sees two of them: the address's failures do.
    const guess = (i: number) => `/api/calendar/scf_${String(i).padStart(32, '0')}.ics`;
    for (let sent = 0; sent < AUTH_FAILURES_PER_WINDOW; sent += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => api.get(guess(sent + i)).expect(404)));
    }
    const refused = await api.get(guess(AUTH_FAILURES_PER_WINDOW)).expect(429);
    assert.match(refused.body.detail, /failed authentications from this address/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    // Refused before the lookup, a real feed's URL included, until the window ends.
    await api.get(pathOf(feed.url)).expect(429);
  });

  describe('shows only what its creator may read, and notes only when turned on', () => {
    async function studentWithNotes(ctx: Awaited<ReturnType<typeof generalApp>>) {
      const alice = await ctx.newStudent();
      const task = { title: 'Essay', due_at: '2027-01-15T10:00:00Z', course: null, notes: 'Ask about the grade' };
      await ctx.api.post('/api/tasks').set(alice.headers).send(task).expect(201);
      const exam = { subject: 'Calculus I', exam_date: '2027-01-20', notes: 'Seat 14' };
      await ctx.api.post('/api/exams').set(alice.headers).send(exam).expect(201);
      return alice;
    }
    const read = async (api: Api, feed: { url: string }) => (await api.get(pathOf(feed.url)).expect(200)).text;

    it('a credential with schedule:read but no tasks:read or exams:read makes a feed with neither', async () => {
      const ctx = await generalApp();
      const alice = await studentWithNotes(ctx);
      const scopes = ['keys:manage', 'schedule:read'];
      const minted = await ctx.api.post('/api/users/me/api-keys').set(alice.headers).send({ name: 'app', scopes });
      assert.equal(minted.status, 201);
      const narrow = { ...alice, headers: { 'x-service-api-key': minted.body.key } } as unknown as Student;
      await ctx.api.get('/api/tasks').set(narrow.headers).expect(403);
      const text = await read(ctx.api, await createFeed(ctx.api, narrow, 'App', { include_notes: true }));
      assert.doesNotMatch(text, /Essay|Calculus|Ask about|Seat 14/);
      assert.match(text, /BEGIN:VCALENDAR/);
      const full = await createFeed(ctx.api, alice);
      assert.match(await read(ctx.api, full), /SUMMARY:Essay/, 'the full credential sees it');
    });

    it('a grant narrowed after the feed was made narrows the feed', async () => {
      const ctx = await generalApp();
      const alice = await studentWithNotes(ctx);
      const feed = await createFeed(ctx.api, alice);
      assert.match(await read(ctx.api, feed), /SUMMARY:Essay/);
      const { grant_id } = await ctx.db
        .selectFrom('calendar_feeds')
        .select('grant_id')
        .where('id', '=', feed.id)
        .executeTakeFirstOrThrow();
      const narrowed = sql<string[]>`array_remove(scopes, 'tasks:read')`;
      await ctx.db.updateTable('oauth_grants').set({ scopes: narrowed }).where('id', '=', grant_id!).execute();
      const text = await read(ctx.api, feed);
      assert.doesNotMatch(text, /Essay/);
      assert.match(text, /SUMMARY:Exam: Calculus I/);
    });

    it('leaves task and exam notes out unless the feed was created with include_notes', async () => {
      const ctx = await generalApp();
      const alice = await studentWithNotes(ctx);
      const plain = await read(ctx.api, await createFeed(ctx.api, alice));
      assert.match(plain, /SUMMARY:Essay/);
      assert.doesNotMatch(plain, /Ask about the grade|Seat 14/);
      const noted = await read(ctx.api, await createFeed(ctx.api, alice, 'Laptop', { include_notes: true }));
      assert.match(noted, /Ask about the grade/);
      assert.match(noted, /Seat 14/);
      const off = await createFeed(ctx.api, alice, 'Tablet', { include_notes: false });
      assert.doesNotMatch(await read(ctx.api, off), /Seat 14/);
    });
  });

  describe('made for some kinds, one course, with reminders and links back to each item', () => {
    async function studentWithCourses(ctx: Awaited<ReturnType<typeof generalApp>>) {
      const alice = await ctx.newStudent({ time_zone: 'Europe/Berlin', country_code: 'kz' });
      const post = async (path: string, body: object) =>
        (await ctx.api.post(path).set(alice.headers).send(body).expect(201)).body as { id: string };
      const ids = {
        calculusTask: (
          await post('/api/tasks', { title: 'Limits sheet', course: 'Calculus I', due_at: '2027-01-12T09:00:00Z' })
        ).id,
        calculusSeries: (
          await post('/api/tasks', {
            title: 'Derivatives drill',
            course: 'Calculus I',
            due_at: '2027-01-11T08:00:00Z',
            recurrence: 'FREQ=WEEKLY;BYDAY=MO;COUNT=3',
          })
        ).id,
        physicsTask: (
          await post('/api/tasks', { title: 'Lab report', course: 'Physics', due_at: '2027-01-13T09:00:00Z' })
        ).id,
        calculusExam: (await post('/api/exams', { subject: 'Calculus I', exam_date: '2027-02-01' })).id,
        physicsExam: (await post('/api/exams', { subject: 'Physics', exam_date: '2027-02-03' })).id,
      };
      return { alice, ids };
    }
    const read = async (api: Api, feed: { url: string }) =>
      parseStrictly((await api.get(pathOf(feed.url)).expect(200)).text);
    const summaries = (events: Array<{ summary: string; uid: string }>) =>
      events
        .filter((event) => !event.uid.startsWith('holiday-'))
        .map((event) => event.summary)
        .sort();

    it('carries only the chosen kinds of the chosen course, and says so when listed', async () => {
      const ctx = await generalApp();
      const { alice } = await studentWithCourses(ctx);
      const exams = await createFeed(ctx.api, alice, 'Exams', { kinds: ['exams'] });
      const examEvents = (await read(ctx.api, exams)).events;
      assert.deepEqual(summaries(examEvents), ['Exam: Calculus I', 'Exam: Physics']);
      assert.equal(examEvents.length, 2, 'no holidays in a feed of exams only');

      const calculus = await createFeed(ctx.api, alice, 'Calculus', { course: 'Calculus I' });
      const calculusEvents = (await read(ctx.api, calculus)).events;
      assert.deepEqual(summaries(calculusEvents), ['Derivatives drill', 'Exam: Calculus I', 'Limits sheet']);
      assert.equal(calculusEvents.length, 3, 'holidays belong to no course');
      const calculusTasks = await createFeed(ctx.api, alice, 'Calculus tasks', {
        kinds: ['tasks'],
        course: 'Calculus I',
      });
      assert.deepEqual(summaries((await read(ctx.api, calculusTasks)).events), ['Derivatives drill', 'Limits sheet']);
      const nothing = await createFeed(ctx.api, alice, 'Calculus', { course: 'calculus i' });
      assert.deepEqual((await read(ctx.api, nothing)).events, [], 'the course is compared exactly');

      const everything = await read(ctx.api, await createFeed(ctx.api, alice, 'All'));
      assert.ok(
        everything.events.some((event) => event.uid.startsWith('holiday-')),
        'the default carries holidays',
      );
      assert.equal(summaries(everything.events).length, 5);

      const listed = (await ctx.api.get('/api/users/me/calendar-feeds').set(alice.headers).expect(200)).body.data;
      const byName = Object.fromEntries(listed.map((feed: { name: string }) => [feed.name, feed]));
      assert.deepEqual(
        { kinds: byName['Exams'].kinds, course: byName['Exams'].course, reminders: byName['Exams'].reminders },
        { kinds: ['exams'], course: null, reminders: [] },
      );
      assert.deepEqual(byName['Calculus tasks'].kinds, ['tasks']);
      assert.equal(byName['Calculus tasks'].course, 'Calculus I');
      assert.deepEqual(byName['All'].kinds, ['tasks', 'exams', 'holidays']);
    });

    it('gives each task and exam the chosen reminders as display alarms', async () => {
      const ctx = await generalApp();
      const { alice } = await studentWithCourses(ctx);
      const reminders = [{ minutes_before: 30 }, { minutes_before: 1440 }, { minutes_before: 0 }];
      const feed = await createFeed(ctx.api, alice, 'Reminded', { reminders });
      assert.deepEqual((feed as unknown as { reminders: unknown }).reminders, reminders, 'in the order given');
      const { events } = await read(ctx.api, feed);
      for (const event of events) {
        const alarms = event.component.getAllSubcomponents('valarm');
        if (event.uid.startsWith('holiday-')) {
          assert.equal(alarms.length, 0, 'a holiday has no reminder');
          continue;
        }
        assert.deepEqual(
          alarms.map((alarm) => String(alarm.getFirstPropertyValue('trigger'))),
          ['-PT30M', '-P1D', 'PT0S'],
          event.summary,
        );
        for (const alarm of alarms) {
          assert.equal(alarm.getFirstPropertyValue('action'), 'DISPLAY');
          assert.equal(alarm.getFirstPropertyValue('description'), event.summary);
        }
      }
      const plain = await read(ctx.api, await createFeed(ctx.api, alice, 'Plain'));
      assert.ok(plain.events.every((event) => event.component.getAllSubcomponents('valarm').length === 0));
    });

    it('links each task and exam to its address in the API, which answers it to the student', async () => {
      const ctx = await generalApp();
      const { alice, ids } = await studentWithCourses(ctx);
      const { events } = await read(ctx.api, await createFeed(ctx.api, alice));
      const links = new Map(events.map((event) => [event.summary, event.component.getFirstPropertyValue('url')]));
      const origin = new URL(String(links.get('Limits sheet'))).origin;
      assert.deepEqual(Object.fromEntries(links), {
        ...Object.fromEntries(events.filter((e) => e.uid.startsWith('holiday-')).map((e) => [e.summary, null])),
        'Limits sheet': `${origin}/api/tasks/${ids.calculusTask}`,
        'Derivatives drill': `${origin}/api/tasks/${ids.calculusSeries}`,
        'Lab report': `${origin}/api/tasks/${ids.physicsTask}`,
        'Exam: Calculus I': `${origin}/api/exams/${ids.calculusExam}`,
        'Exam: Physics': `${origin}/api/exams/${ids.physicsExam}`,
      });
      for (const [summary, link] of links) {
        if (link === null) continue;
        const item = await ctx.api
          .get(pathOf(String(link)))
          .set(alice.headers)
          .expect(200);
        assert.ok([item.body.title, `Exam: ${item.body.subject}`].includes(summary), `${link} is ${summary}`);
        await ctx.api.get(pathOf(String(link))).expect(401);
      }
      // A series links to its open occurrence: closing it moves the link to the next one.
      await ctx.api
        .patch(`/api/tasks/${ids.calculusSeries}`)
        .set(alice.headers)
        .send({ status: 'completed' })
        .expect(200);
      const next = (await read(ctx.api, await createFeed(ctx.api, alice, 'Later'))).events.find(
        (event) => event.summary === 'Derivatives drill',
      )!;
      const nextId = pathOf(String(next.component.getFirstPropertyValue('url')))
        .split('/')
        .at(-1)!;
      assert.notEqual(nextId, ids.calculusSeries);
      const successor = await ctx.api.get(`/api/tasks/${nextId}`).set(alice.headers).expect(200);
      assert.equal(successor.body.status, 'open');
      assert.equal(successor.body.due_at, '2027-01-18T08:00:00.000Z');
    });

    it('refuses choices out of bounds: no kinds, a kind twice, an unknown kind, four reminders, one over four weeks', async () => {
      const { api, newStudent } = await generalApp();
      const alice = await newStudent();
      for (const choices of [
        { kinds: [] },
        { kinds: ['exams', 'exams'] },
        { kinds: ['rooms'] },
        { course: '' },
        { reminders: [0, 10, 20, 30].map((minutes_before) => ({ minutes_before })) },
        { reminders: [{ minutes_before: 40_321 }] },
        { reminders: [{ minutes_before: -1 }] },
        { reminders: [{ minutes_before: 30 }, { minutes_before: 30 }] },
        { reminders: [{ minutes_before: 30, action: 'EMAIL' }] },
      ]) {
        const refused = await api
          .post('/api/users/me/calendar-feeds')
          .set(alice.headers)
          .send({ name: 'x', ...choices });
        assert.equal(refused.status, 400, JSON.stringify(choices));
        assert.equal(refused.body.code, 'invalid_request');
      }
      assert.deepEqual((await api.get('/api/users/me/calendar-feeds').set(alice.headers).expect(200)).body.data, []);
      const bounds = await createFeed(api, alice, 'bounds', {
        kinds: ['holidays', 'tasks', 'exams'],
        course: null,
        reminders: [{ minutes_before: 40_320 }, { minutes_before: 0 }, { minutes_before: 1 }],
      });
      assert.equal(bounds.url.endsWith('.ics'), true);
    });
  });

  it('stops serving a feed once its account is deleted', async () => {
    const { api, newStudentThroughOAuth } = await generalApp();
    const alice = await newStudentThroughOAuth();
    const feed = await createFeed(api, alice);
    await api.get(pathOf(feed.url)).expect(200);
    await api.delete('/api/users/me').set(alice.headers).expect(204);
    await api.get(pathOf(feed.url)).expect(404);
  });
});
