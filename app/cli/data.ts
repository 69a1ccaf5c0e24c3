// migrate and seed: the schema, reference data and demo data.
import { DEMO_SEED, seedDemo, seedReference } from '../../db/seed/index.ts';
import { BULK_TIMEOUTS, seedScale, type ScaleCounts } from '../../db/seed/scale.ts';
import type { Db } from '../../db/connect.ts';
import { integerOption, note, parse, print, UsageError, withDb } from './shared.ts';

/** Ten million students is far past any scale the service is measured at; a typo of extra zeros stops here. */
const MAX_SCALE = 10_000_000;

/** Faker seeds a 32-bit Mersenne Twister; larger seeds would alias smaller ones. */
const MAX_SEED = 2 ** 32 - 1;

export async function migrate(args: string[]): Promise<void> {
  parse(args, {});
  const applied = await withDb(async (_db, applied) => applied);
  print(applied.length === 0 ? 'already up to date' : applied.map((name) => `applied ${name}`).join('\n'));
}

export async function seed(args: string[]): Promise<void> {
  const { values } = parse(args, { demo: { type: 'boolean' }, seed: { type: 'string' }, scale: { type: 'string' } });
  if (values.seed !== undefined && !values.demo) throw new UsageError('--seed only applies with --demo');
  const demoSeed = integerOption('--seed', values.seed, 0, MAX_SEED) ?? DEMO_SEED;
  const scale = integerOption('--scale', values.scale, 1, MAX_SCALE);

  await withDb(
    async (db) => {
      const now = new Date();
      const reference = await seedReference(db, { now });
      print(`reference data: ${reference.universities} universities, ${reference.holidays} holidays`);
      if (scale !== undefined) await seedAtScale(db, scale);
      if (!values.demo) return;
      const demo = await seedDemo(db, { seed: demoSeed, now });
      print(
        demo.users === 0
          ? 'demo data: skipped, the database already has users'
          : `demo data (seed ${demoSeed}): ${demo.users} users, ${demo.decks} decks, ${demo.aiMessages} tutor messages, ${demo.studyRooms} study rooms`,
      );
    },
    scale === undefined ? undefined : BULK_TIMEOUTS,
  );
}

async function seedAtScale(db: Db, students: number): Promise<void> {
  const started = performance.now();
  const bar = progressBar(students, started);
  // A step after the bar: on a terminal below it (the bar has no newline of its own), in a log a line of its own.
  const tty = process.stderr.isTTY;
  const step = (what: string) => {
    const line = `${what} … (from ${((performance.now() - started) / 1000).toFixed(1)} s)`;
    note(tty ? `\n${line}` : `${line}\n`);
  };
  const counts = await seedScale(db, { students, onChunk: bar, onStep: step });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  note(tty ? '\n' : '');
  print(
    `scale data: ${fmt(counts.students)} students, ${fmt(counts.tasks)} tasks, ${fmt(counts.decks)} decks, ${fmt(counts.cards)} cards, ${fmt(counts.reviews)} reviews in ${seconds} s`,
  );
}

/** A bar redrawn in place on a terminal; one line per chunk otherwise (CI logs). */
function progressBar(total: number, started: number): (done: ScaleCounts) => void {
  const width = 30;
  return (done) => {
    const filled = Math.round((done.students / total) * width);
    const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${fmt(done.students)} / ${fmt(total)} students  ${((performance.now() - started) / 1000).toFixed(1)} s`;
    note(process.stderr.isTTY ? `\r${line}` : `${line}\n`);
  };
}

function fmt(n: number): string {
  return n.toLocaleString('en');
}
