import assert from 'node:assert/strict';
import { localReply, localTutor } from '../../services/ai/tutor/local.ts';
import { systemPrompt } from '../../services/ai/tutor/prompt.ts';
import { topicOf } from '../../services/ai/tutor/topic.ts';
import type { StudentFacts, TutorEvent } from '../../services/ai/tutor/types.ts';
import { loadConfig } from '../../app/config.ts';
import { ConfigError } from '../../server/process/config-error.ts';

const NOW = new Date('2026-11-22T09:00:00Z');
const hours = (h: number) => new Date(NOW.getTime() + h * 3_600_000);

function facts(overrides: Partial<StudentFacts> = {}): StudentFacts {
  return {
    first_name: 'Aigerim',
    now: NOW,
    time_zone: 'Asia/Almaty',
    due_decks: [],
    exams: [],
    tasks: [],
    focus: null,
    ...overrides,
  };
}

describe('local tutor', () => {
  it('names the topic, reports what is due and the nearest exam, and suggests reviewing the fullest deck', () => {
    const pieces = localReply(
      'Can you explain the Krebs cycle?',
      [],
      facts({
        due_decks: [
          { id: 'd1', title: 'Anatomy', due: 12 },
          { id: 'd2', title: 'Chemistry', due: 3 },
        ],
        exams: [{ id: 'e1', subject: 'Biology', exam_date: '2026-11-27', days_left: 5 }],
      }),
    );
    assert.deepEqual(pieces, [
      "Let's look at the Krebs cycle together, Aigerim. ",
      'You have 12 cards due in Anatomy, 3 in Chemistry; your Biology exam is in 5 days (2026-11-27). ',
      'Next step: review the 12 due cards in Anatomy now, then explain the Krebs cycle in two sentences of your own and check them against your notes.',
    ]);
  });

  it('puts an overdue task before due cards, and says it is overdue', () => {
    const reply = localReply(
      'help me with essays',
      [],
      facts({
        due_decks: [{ id: 'd1', title: 'Anatomy', due: 1 }],
        tasks: [{ id: 't1', title: 'Essay', course: 'History', due_at: hours(-3) }],
      }),
    ).join('');
    assert.match(reply, /Essay for History is overdue by 3 hours\./);
    assert.match(reply, /Next step: finish Essay for History first/);
  });

  it('prepares for a near exam when nothing is due, and invites a student with no material to add some', () => {
    const near = localReply(
      'What now?',
      [],
      facts({ exams: [{ id: 'e1', subject: 'Law', exam_date: '2026-11-30', days_left: 8 }] }),
    ).join('');
    assert.match(near, /Next step: prepare for Law/);
    const empty = localReply('Hello', [], facts()).join('');
    assert.match(empty, /Nothing is due for you right now\./);
    assert.match(empty, /add a deck or an exam/);
  });

  it('uses the focus deck or exam as the topic, and greets a continued conversation differently', () => {
    const deck = localReply(
      'Quiz me',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      facts({
        focus: { kind: 'deck', id: 'd1', title: 'Anatomy', cards: 40, due: 0 },
      }),
    );
    assert.equal(deck[0], 'Back to Anatomy, Aigerim. ');
    assert.match(
      deck.join(''),
      /Anatomy has 40 cards, 0 due now\. Next step: explain Anatomy .*; Anatomy has nothing due until later\./,
    );
    const exam = localReply(
      'Plan?',
      [],
      facts({ focus: { kind: 'exam', id: 'e1', subject: 'Biology', exam_date: '2026-11-23', days_left: 1, due: 0 } }),
    ).join('');
    assert.match(exam, /Your Biology exam is tomorrow \(2026-11-23\)/);
    assert.match(exam, /write three questions the Biology exam could ask/);
  });

  it('is deterministic, and streams the same pieces followed by finish', async () => {
    const input = {
      message: 'What is osmosis?',
      history: [],
      facts: facts({ due_decks: [{ id: 'd1', title: 'Bio', due: 2 }] }),
    };
    const events: TutorEvent[] = [];
    for await (const event of localTutor({ pauseMs: 0 }).reply({ ...input, signal: new AbortController().signal }))
      events.push(event);
    const texts = events.flatMap((e) => (e.type === 'delta' ? [e.text] : []));
    assert.deepEqual(texts, localReply(input.message, input.history, input.facts));
    assert.deepEqual(events.at(-1), {
      type: 'finish',
      finish_reason: 'stop',
      usage: { input_tokens: null, output_tokens: null },
    });
  });

  it('stops without finishing once the signal is aborted', async () => {
    const abort = new AbortController();
    const events: TutorEvent[] = [];
    for await (const event of localTutor({ pauseMs: 5 }).reply({
      message: 'Hi',
      history: [],
      facts: facts(),
      signal: abort.signal,
    })) {
      events.push(event);
      abort.abort();
    }
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'delta');
  });
});

describe('topicOf', () => {
  const cases: Array<[string, string]> = [
    ['Can you explain the Krebs cycle?', 'the Krebs cycle'],
    ['Hello! What is osmosis?', 'osmosis'],
    ['And diffusion?', 'diffusion'],
    ['so, what about mitosis', 'mitosis'],
    ['Quiz me', 'your question'],
    [
      'I think the mitochondria is the powerhouse of the cell and I want to know why exactly',
      'I think the mitochondria is the powerhouse of the cell and…',
    ],
  ];
  for (const [message, topic] of cases) it(`"${message}" → "${topic}"`, () => assert.equal(topicOf(message), topic));
});

describe('systemPrompt', () => {
  it("states the student's facts in their zone, overdue tasks marked, and the focus", () => {
    const prompt = systemPrompt(
      facts({
        due_decks: [{ id: 'd1', title: 'Anatomy', due: 4 }],
        tasks: [{ id: 't1', title: 'Lab report', course: null, due_at: new Date('2026-11-21T20:00:00Z') }],
        focus: { kind: 'deck', id: 'd1', title: 'Anatomy', cards: 10, due: 4 },
      }),
    );
    assert.match(prompt, /Today is 2026-11-22 \(Asia\/Almaty\)/);
    assert.match(prompt, /- flashcard deck "Anatomy": 4 cards due now/);
    assert.match(prompt, /- open task "Lab report" due 2026-11-22 \(overdue\)/); // 20:00 UTC is 01:00 the next day in Almaty
    assert.match(prompt, /asks about the deck "Anatomy" \(10 cards, 4 due now\)/);
    assert.match(systemPrompt(facts()), /- nothing is due and no exam is planned/);
  });
});

describe('AI configuration', () => {
  it('uses the built-in tutor unless both AI_BASE_URL and AI_API_KEY are set', () => {
    assert.equal(loadConfig({}).ai, undefined);
    assert.deepEqual(loadConfig({ AI_BASE_URL: 'https://api.example.com/v1', AI_API_KEY: 'sk-1' }).ai, {
      baseUrl: 'https://api.example.com/v1',
      apiKey: 'sk-1',
      model: 'gpt-4o-mini',
    });
    assert.equal(
      loadConfig({ AI_BASE_URL: 'http://127.0.0.1:8080/v1', AI_API_KEY: 'k', AI_MODEL: 'llama3' }).ai?.model,
      'llama3',
    );
  });

  it('refuses one of the pair without the other, and a base URL that is not http(s)', () => {
    assert.throws(() => loadConfig({ AI_API_KEY: 'sk-1' }), ConfigError);
    assert.throws(() => loadConfig({ AI_BASE_URL: 'https://api.example.com/v1' }), ConfigError);
    assert.throws(
      () => loadConfig({ AI_BASE_URL: 'ftp://example.com', AI_API_KEY: 'k' }),
      /AI_BASE_URL must be an absolute http\(s\) URL/,
    );
  });
});
