// Demo data: deterministic for a seed and a `now`, so a demo database and its tests look the same every time.
import { Faker, base, en, ru } from '@faker-js/faker';
import type { Insertable } from 'kysely';
import type { AiMessagesTable, FlashcardDecksTable, StudyRoomsTable, UsersTable } from '../schema.ts';

export interface DemoData {
  users: Insertable<UsersTable>[];
  decks: Insertable<FlashcardDecksTable>[];
  aiMessages: Insertable<AiMessagesTable>[];
  studyRooms: Insertable<StudyRoomsTable>[];
}

const DAY_MS = 86_400_000;
const MAX_XP = 50_000;

// faker has no Kazakh locale: a share of users gets a Kazakh first name from this list.
const KAZAKH_FIRST_NAMES = [
  'Айдана',
  'Нурсултан',
  'Арман',
  'Аружан',
  'Ерлан',
  'Мадина',
  'Диас',
  'Алихан',
  'Жанель',
  'Асель',
  'Данияр',
  'Айгерим',
  'Нурлан',
  'Аскар',
  'Сауле',
  'Бекзат',
  'Кайрат',
  'Зарина',
  'Аян',
  'Томирис',
];

const COURSES = [
  'Linear Algebra',
  'Calculus I',
  'Calculus II',
  'Discrete Mathematics',
  'Probability and Statistics',
  'Physics: Mechanics',
  'Organic Chemistry',
  'Microeconomics',
  'Macroeconomics',
  'Data Structures',
  'Algorithms',
  'Databases',
  'Operating Systems',
  'Computer Networks',
  'Machine Learning',
  'Introduction to Programming',
  'History of Kazakhstan',
  'Russian Literature',
  'Philosophy',
  'Human Anatomy',
  'English B2 Vocabulary',
  'Kazakh Language',
  'Financial Accounting',
  'Constitutional Law',
];
const DECK_SUFFIXES = ['', '', ' — exam prep', ' — midterm', ': key terms', ' flashcards'];
const ROOM_FORMATS = [
  '{course} study group',
  '{course} exam marathon',
  'Late-night {course}',
  '{course} problem solving',
];

/**
 * Users, their flashcard decks, tutor chat messages and study rooms, with explicit ids so relations hold.
 * Same options → identical output (faker is seeded, and every date is computed from `now`, never the clock).
 */
/** A demo contract agrees to the plus plan's limits (the partner surface shows such an account as `pro`). */
function demoPlan(plan: 'free' | 'plus' | 'contract') {
  if (plan !== 'contract') return { plan };
  return { plan, contract_per_minute: 600, contract_per_day: 100_000, contract_ai_per_hour: 200 };
}

export function generateDemoData(opts: {
  seed: number;
  now: Date;
  universityIds: readonly string[];
  userCount?: number;
}): DemoData {
  const faker = new Faker({ locale: [ru, en, base] });
  faker.seed(opts.seed);
  const now = opts.now.getTime();
  const between = (from: number, to: number) =>
    new Date(faker.number.int({ min: Math.ceil(from), max: Math.max(Math.ceil(from), Math.floor(to)) }));

  const users: Insertable<UsersTable>[] = [];
  const nicknames = new Set<string>();
  const activeUsers: { id: string; since: number }[] = [];
  for (let i = 0; i < (opts.userCount ?? 300); i++) {
    const firstName = faker.datatype.boolean(0.35)
      ? faker.helpers.arrayElement(KAZAKH_FIRST_NAMES)
      : faker.person.firstName();
    const recency = faker.number.float();
    const lastActive =
      recency < 0.7
        ? between(now - 30 * DAY_MS, now)
        : recency < 0.95
          ? between(now - 400 * DAY_MS, now - 31 * DAY_MS)
          : null;
    const createdAt = between(now - 730 * DAY_MS, (lastActive?.getTime() ?? now) - 1);
    const active = recency < 0.7;
    const id = faker.string.uuid();
    users.push({
      id,
      nickname: uniqueNickname(faker.internet.username({ firstName }), nicknames, faker),
      first_name: firstName,
      avatar_url: faker.datatype.boolean(0.75) ? faker.image.avatar() : null,
      bio: faker.datatype.boolean(0.3) ? '' : faker.person.bio(),
      // Cubing a uniform number skews XP: most users have little, a few have a lot.
      xp: Math.floor(MAX_XP * faker.number.float() ** 3),
      streak: active ? Math.floor(120 * faker.number.float() ** 2) : 0,
      ...demoPlan(
        faker.helpers.weightedArrayElement([
          { weight: 80, value: 'free' },
          { weight: 14, value: 'plus' },
          { weight: 6, value: 'contract' },
        ] as const),
      ),
      university_id:
        opts.universityIds.length > 0 && faker.datatype.boolean(0.9)
          ? faker.helpers.arrayElement(opts.universityIds)
          : null,
      last_active_at: lastActive,
      created_at: createdAt,
    });
    if (active) activeUsers.push({ id, since: createdAt.getTime() });
  }

  const decks: Insertable<FlashcardDecksTable>[] = activeUsers.flatMap((user) =>
    Array.from({ length: faker.number.int({ min: 0, max: 5 }) }, () => ({
      id: faker.string.uuid(),
      user_id: user.id,
      title: faker.helpers.arrayElement(COURSES) + faker.helpers.arrayElement(DECK_SUFFIXES),
      created_at: between(user.since, now),
    })),
  );

  const aiMessages: Insertable<AiMessagesTable>[] = [];
  for (const user of faker.helpers.arrayElements(activeUsers, Math.round(activeUsers.length * 0.4))) {
    for (let c = faker.number.int({ min: 1, max: 3 }); c > 0; c--) {
      const topic = faker.helpers.arrayElement(COURSES);
      let at = between(user.since, now - DAY_MS).getTime();
      for (let turn = faker.number.int({ min: 1, max: 6 }); turn > 0; turn--) {
        for (const role of ['user', 'assistant'] as const) {
          at += faker.number.int({ min: 5_000, max: 120_000 });
          aiMessages.push({
            id: faker.string.uuid(),
            user_id: user.id,
            role,
            content: message(faker, role, topic),
            created_at: new Date(at),
          });
        }
      }
    }
  }

  const studyRooms: Insertable<StudyRoomsTable>[] = Array.from(
    { length: faker.number.int({ min: 20, max: 40 }) },
    () => {
      const creator =
        activeUsers.length > 0 && faker.datatype.boolean(0.9) ? faker.helpers.arrayElement(activeUsers) : undefined;
      return {
        id: faker.string.uuid(),
        name: faker.helpers.arrayElement(ROOM_FORMATS).replace('{course}', faker.helpers.arrayElement(COURSES)),
        created_by: creator?.id ?? null,
        created_at: between(creator?.since ?? now - 365 * DAY_MS, now),
      };
    },
  );

  return { users, decks, aiMessages, studyRooms };
}

/** Letters, digits, '_' and '.', 3–30 characters, unique ignoring case (the database's unique index is on lower(nickname)). */
function uniqueNickname(candidate: string, taken: Set<string>, faker: Faker): string {
  let nickname = candidate
    .replace(/[^A-Za-z0-9_.]/g, '')
    .slice(0, 26)
    .padEnd(3, '_');
  while (taken.has(nickname.toLowerCase()))
    nickname = `${nickname.slice(0, 26)}${faker.number.int({ min: 10, max: 9999 })}`.slice(0, 30);
  taken.add(nickname.toLowerCase());
  return nickname;
}

function message(faker: Faker, role: 'user' | 'assistant', topic: string): string {
  if (role === 'user') {
    return faker.helpers.arrayElement([
      `Can you explain the main idea of ${topic} in simple words?`,
      `I have an exam in ${topic} next week. What should I revise first?`,
      `Give me three practice questions on ${topic}.`,
      `I don't understand my ${topic} lecture notes. Can you help?`,
      `Make a short summary of today's ${topic} topic for my flashcards.`,
    ]);
  }
  return faker.helpers.arrayElement([
    `Sure. In ${topic}, start with the definitions, then work through one solved example before trying problems on your own.`,
    `Here is a plan for ${topic}: review the key terms, redo the homework problems, then take a timed practice test.`,
    `Good question. The core of ${topic} is easier once you connect it to an example from class — let's take one step by step.`,
    `I've turned the main points of ${topic} into five flashcards. Review them today and again in two days.`,
  ]);
}
