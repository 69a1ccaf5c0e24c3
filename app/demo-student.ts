// The demo student of a first embedded start: an account with a personal key holding every scope (both secrets
// shown once, and made anew on demand: remakeDemoCredentials, `npm run cli -- demo credentials`) and a week of study
// material — tasks (one overdue, one recurring), two decks with due cards and two exams linked to them, a conversation
// with the tutor whose last reply's stream dropped, an app the student authorized, a webhook endpoint with one
// delivery, and study rooms — so the daily loop, the schedule and the tutor have something to say at once. Every record
// has a fixed id, the same on every instance, so the spec's examples can name them and run as written. Records that a
// DELETE example removes (a task, a deck, a card, an exam, a second key, a second conversation, a second app's grant,
// a second endpoint, a calendar feed, a room to leave and one to delete) exist only for that example: no other example
// names them, so the examples run in any order, as contract testers run them.
import { DateTime } from 'luxon';
import { v5 as uuidv5 } from 'uuid';
import type { Db } from '../db/connect.ts';
import { listApiKeys, revokeApiKey } from '../db/queries/api-keys.ts';
import { replaceDeckLinks, replaceTaskLinks, insertExam } from '../db/queries/exams.ts';
import { createConversation, insertMessage, touchConversation } from '../db/queries/ai.ts';
import { insertCalendarFeed } from '../db/queries/calendar.ts';
import { countAttempt, finishDelivery, insertAttempt, upsertDelivery } from '../db/queries/deliveries.ts';
import { insertCard, insertDeck } from '../db/queries/flashcards.ts';
import { insertClient, insertGrant } from '../db/queries/oauth.ts';
import { insertPersonalKey, listPersonalKeys } from '../db/queries/personal-api-keys.ts';
import { insertRoom, insertSession } from '../db/queries/rooms.ts';
import { insertTask } from '../db/queries/tasks.ts';
import { findNamedAccount } from '../db/queries/users.ts';
import { insertEndpoint } from '../db/queries/webhooks.ts';
import { replacePassword } from '../services/accounts/replace-password.ts';
import { emitEvent } from '../services/events/emit.ts';
import { endpointBody } from '../services/webhooks/endpoint-body.ts';
import { createWebhookSecret, sealEndpointSecret } from '../services/webhooks/secrets.ts';
import { createAccount, generatePassword } from '../server/auth/accounts.ts';
import { insertWithFreshKey, issueApiKey } from '../server/auth/api-keys.ts';
import { generateFeedToken } from '../server/auth/calendar-feed-tokens.ts';
import { ALL_SCOPES } from '../server/auth/scopes.ts';
import type { SecretBox } from '../server/auth/secret-box.ts';

/** Fixed for good: the spec's examples carry ids derived from it. */
const DEMO_ID_NAMESPACE = '3b0c1f9e-6a2d-4c57-8e14-9d7a5b2c6e80';
/** The id of the demo record called `name` (`deck/anatomy`, `task/essay`…): the same on every instance. */
const demoId = (name: string) => uuidv5(name, DEMO_ID_NAMESPACE);

/** The name of the demo keys a first start makes (the spec's examples show it), and of those made anew. */
export const FIRST_START_KEY_NAME = 'demo key (first start)';
const REMADE_KEY_NAME = 'demo key';

export interface DemoCredentials {
  partnerKey: string;
  student: { email: string; password: string; key: string };
}

export const DEMO_STUDENT = {
  email: 'demo@study-companion.example',
  nickname: 'demo_student',
  first_name: 'Demo',
  time_zone: 'Asia/Almaty',
  country_code: 'kz',
} as const;

const DECKS = {
  anatomy: {
    title: 'Anatomy: bones of the arm',
    course: 'Anatomy',
    cards: [
      ['Bone of the upper arm', 'Humerus'],
      ['Lateral bone of the forearm', 'Radius'],
      ['Medial bone of the forearm', 'Ulna'],
      ['Number of carpal bones', 'Eight'],
      ['Bone that articulates with the humerus at the shoulder', 'Scapula'],
    ],
  },
  calculus: {
    title: 'Calculus: derivatives',
    course: 'Calculus',
    cards: [
      ['d/dx sin x', 'cos x'],
      ['d/dx eˣ', 'eˣ'],
      ['d/dx ln x', '1/x'],
      ['Chain rule', '(f∘g)′ = f′(g) · g′'],
    ],
  },
} as const;

/** The tutor exchange of the demo conversation: the student's turns and the tutor's replies, the last one cut short. */
const KREBS_CONVERSATION: ReadonlyArray<readonly [string, 'stop' | 'interrupted']> = [
  ['Can you explain the Krebs cycle?', 'stop'],
  [
    "Let's look at the Krebs cycle together, Demo. It turns acetyl-CoA into CO₂, and the energy it frees is stored in NADH, FADH₂ and GTP.",
    'stop',
  ],
  ['And what comes before it?', 'stop'],
  ['Back to what comes before it, Demo. ', 'interrupted'],
];

/**
 * Public apps (PKCE, no secret) the demo student has authorized, with fixed client ids: one to list, one that
 * revokeMyAuthorization's example revokes (revoking ends every grant to the app, so it needs its own).
 */
const DEMO_APPS = [
  { client_id: 'client_demo_planner', name: 'Demo planner', scopes: ['tasks:read', 'tasks:write'] },
  { client_id: 'client_demo_to_revoke', name: 'Old flashcards app', scopes: ['decks:read'] },
] as const;
const DEMO_APP_REDIRECT_URI = 'http://localhost:8080/callback';

/** A conversation of alternating turns, the student's first; a reply's finish reason as given, the student's none. */
async function demoConversation(
  db: Db,
  userId: string,
  name: string,
  turns: ReadonlyArray<readonly [string, 'stop' | 'interrupted']>,
  now: Date,
) {
  const conversationId = await createConversation(db, userId, turns[0]![0], now, demoId(name));
  for (const [i, [content, finish]] of turns.entries()) {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const created_at = new Date(now.getTime() + i * 1000);
    await insertMessage(db, {
      id: demoId(`${name}/message/${i + 1}`),
      user_id: userId,
      conversation_id: conversationId,
      role,
      content,
      finish_reason: role === 'user' ? null : finish,
      created_at,
    });
  }
  await touchConversation(db, userId, conversationId, new Date(now.getTime() + (turns.length - 1) * 1000));
}

/**
 * The student's own webhook endpoints (made as registration makes them, with a secret sealed by `secrets`, but
 * without its check that the URL resolves publicly): one to read, rotate, test and re-send to, one only for
 * deleteWebhookEndpoint's example. Their hosts are under `.invalid`, which never resolves (RFC 6761), so nothing the
 * demo sends reaches anyone: a test event, a re-send or an operator's warning fails at DNS and is retried on the
 * usual schedule, quietly. They take only `user.warned`, which only the operator causes (`users warn`), so no API
 * request of a demo session, the bench or a test fans out to them. The first has one settled delivery, a test that
 * succeeded, which re-sending makes pending again.
 */
async function demoWebhooks(trx: Db, secrets: SecretBox, userId: string, now: Date) {
  const endpoint = async (name: string, url: string, description: string) => {
    const id = demoId(`webhook-endpoint/${name}`);
    const secret_sealed = sealEndpointSecret(secrets, id, createWebhookSecret());
    return insertEndpoint(
      trx,
      { user_id: userId },
      { id, url, event_types: ['user.warned'], description, enabled: true, secret_sealed, grant_id: null },
      now,
    );
  };
  const warnings = await endpoint('warnings', 'https://receiver.invalid/study-companion/warnings', 'Account warnings');
  await endpoint('to-delete', 'https://old-receiver.invalid/hooks', 'Old receiver');

  const eventId = await emitEvent(trx, {
    type: 'webhook.test',
    studentId: userId,
    data: { object: endpointBody(warnings) },
    at: now,
    direct: true,
  });
  const { id } = await upsertDelivery(trx, {
    id: demoId('webhook-endpoint/warnings/delivery/test'),
    event_id: eventId,
    endpoint_id: warnings.id,
    at: now,
  });
  const started_at = new Date(now.getTime() + 120);
  await insertAttempt(trx, { delivery_id: id, started_at, duration_ms: 48, response_status: 204, error: null });
  await countAttempt(trx, id, started_at);
  await finishDelivery(
    trx,
    { id, due: now },
    { status: 'succeeded', next_attempt_at: null, succeeded_at: new Date(started_at.getTime() + 48) },
  );
}

export async function createDemoStudent(db: Db, now: Date, secrets: SecretBox): Promise<DemoCredentials['student']> {
  const password = generatePassword();
  return db.transaction().execute(async (trx) => {
    const student = await createAccount(trx, { id: demoId('student'), ...DEMO_STUDENT, password });
    const { key } = await insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(trx, {
        id: demoId('key/first-start'),
        user_id: student.id,
        prefix,
        key_hash: hash,
        name: FIRST_START_KEY_NAME,
        scopes: [...ALL_SCOPES],
      }),
    );
    await insertWithFreshKey(({ prefix, hash }) =>
      insertPersonalKey(trx, {
        id: demoId('key/to-revoke'),
        user_id: student.id,
        prefix,
        key_hash: hash,
        name: 'old laptop script',
        scopes: ['tasks:read'],
      }),
    );
    const today = DateTime.fromJSDate(now, { zone: DEMO_STUDENT.time_zone }).startOf('day');
    const at = (days: number, hour: number) => today.plus({ days }).set({ hour }).toJSDate();
    const task = (name: string, title: string, course: string, due_at: Date, recurrence: string | null = null) =>
      insertTask(
        trx,
        {
          id: demoId(`task/${name}`),
          user_id: student.id,
          title,
          course,
          due_at,
          notes: null,
          priority: 'normal',
          recurrence,
          series_starts_at: recurrence ? due_at : null,
        },
        now,
      );

    await task('lab-report', 'Lab report: muscle fatigue', 'Anatomy', at(-1, 18));
    const problemSet = await task('problem-set', 'Problem set 7', 'Calculus', at(1, 9));
    await task('essay', 'Essay draft: causes of the First World War', 'History', at(3, 18));
    await task('lecture-notes', 'Review lecture notes', 'Anatomy', at(2, 20), 'FREQ=WEEKLY;BYDAY=MO,TH');
    await task('to-delete', 'Return library books', 'History', at(30, 12));

    const deckIds: Record<keyof typeof DECKS, string> = { anatomy: '', calculus: '' };
    for (const [name, deck] of Object.entries(DECKS) as Array<
      [keyof typeof DECKS, (typeof DECKS)[keyof typeof DECKS]]
    >) {
      deckIds[name] = await insertDeck(
        trx,
        { id: demoId(`deck/${name}`), user_id: student.id, title: deck.title, course: deck.course },
        now,
      );
      for (const [i, [front, back]] of deck.cards.entries()) {
        await insertCard(
          trx,
          { id: demoId(`deck/${name}/card/${i + 1}`), user_id: student.id, deck_id: deckIds[name], front, back },
          now,
        );
      }
    }
    await insertDeck(
      trx,
      { id: demoId('deck/to-delete'), user_id: student.id, title: 'Scratch deck', course: null },
      now,
    );
    await insertCard(
      trx,
      {
        id: demoId('deck/calculus/card/to-delete'),
        user_id: student.id,
        deck_id: deckIds.calculus,
        front: 'd/dx x',
        back: '1',
      },
      now,
    );

    const date = (days: number) => today.plus({ days }).toISODate()!;
    const anatomyExam = await insertExam(
      trx,
      { id: demoId('exam/anatomy'), user_id: student.id, subject: 'Anatomy', exam_date: date(10) },
      now,
    );
    await replaceDeckLinks(trx, student.id, anatomyExam.id, [deckIds.anatomy]);
    const calculusExam = await insertExam(
      trx,
      { id: demoId('exam/calculus'), user_id: student.id, subject: 'Calculus', exam_date: date(20) },
      now,
    );
    await replaceDeckLinks(trx, student.id, calculusExam.id, [deckIds.calculus]);
    await replaceTaskLinks(trx, student.id, calculusExam.id, [problemSet.id]);
    await insertExam(
      trx,
      { id: demoId('exam/to-delete'), user_id: student.id, subject: 'History', exam_date: date(60) },
      now,
    );

    // Rooms: one that the reads show, one whose timer is idle (for a start), one whose 3-hour session runs (for a
    // stop), and one each for leaving and deleting.
    const room = (name: string, title: string, course: string | null) =>
      insertRoom(trx, { id: demoId(`room/${name}`), name: title, course, created_by: student.id }, now);
    await room('study-group', 'Anatomy study group', 'Anatomy');
    await room('timer', 'Pomodoro corner', null);
    const running = await room('to-stop', 'Late-night calculus', 'Calculus');
    await insertSession(trx, {
      room_id: running.id,
      started_by: student.id,
      duration_ms: 180 * 60_000,
      started_at: now,
    });
    await room('to-leave', 'Old history group', 'History');
    await room('to-delete', 'Scratch room', null);

    await demoConversation(trx, student.id, 'conversation/krebs', KREBS_CONVERSATION, now);
    await demoConversation(
      trx,
      student.id,
      'conversation/to-delete',
      [
        ['What is the femur?', 'stop'],
        ['The thigh bone, the longest bone of the body.', 'stop'],
      ],
      now,
    );
    for (const app of DEMO_APPS) {
      await insertClient(trx, {
        id: app.client_id,
        name: app.name,
        secret_hash: null,
        redirect_uris: [DEMO_APP_REDIRECT_URI],
        grants: ['authorization_code', 'refresh_token'],
        scopes: [...app.scopes],
        owner_user_id: null,
      });
      await insertGrant(trx, { client_id: app.client_id, user_id: student.id, scopes: [...app.scopes] });
    }
    await demoWebhooks(trx, secrets, student.id, now);
    // Only for revokeMyCalendarFeed's example: its URL, the feed's credential, is shown to no one.
    const feed = generateFeedToken();
    const tablet = { id: demoId('calendar-feed/to-revoke'), user_id: student.id, name: 'Old tablet', grant_id: null };
    const secret = { prefix: feed.prefix, token_hash: feed.hash };
    await insertCalendarFeed(trx, { ...tablet, ...secret, scopes: [], include_notes: false });
    return { email: student.email, password, key };
  });
}

/**
 * New demo credentials, for when the ones printed at the first start are lost (they are stored only as hashes): a
 * partner key, the student's password and personal key. The previous demo keys are revoked, and the password change
 * ends the student's sign-ins as any reset does. Undefined when the database has no demo student.
 */
export async function remakeDemoCredentials(db: Db, now: Date): Promise<DemoCredentials | undefined> {
  const student = await findNamedAccount(db, { email: DEMO_STUDENT.email });
  if (!student) return undefined;
  const demoKey = (key: { name: string }) => key.name === FIRST_START_KEY_NAME || key.name === REMADE_KEY_NAME;
  const partnerKeys = (await listApiKeys(db)).filter((key) => key.revoked_at === null && demoKey(key));
  for (const key of [...partnerKeys, ...(await listPersonalKeys(db, student.id)).filter(demoKey)])
    await revokeApiKey(db, key.prefix);
  const password = generatePassword();
  await replacePassword(db, student.id, password, { keptGrantId: null, reason: 'password_reset', at: now });
  const { key } = await insertWithFreshKey(({ prefix, hash }) =>
    insertPersonalKey(db, {
      user_id: student.id,
      prefix,
      key_hash: hash,
      name: REMADE_KEY_NAME,
      scopes: [...ALL_SCOPES],
    }),
  );
  return {
    partnerKey: (await issueApiKey(db, { name: REMADE_KEY_NAME })).key,
    student: { email: DEMO_STUDENT.email, password, key },
  };
}
