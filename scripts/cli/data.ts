// migrate and seed: the schema, reference data and demo data.
import { DEMO_SEED, seedDemo, seedReference } from '../../db/seed/index.ts';
import { integerOption, parse, UsageError, withDb } from './shared.ts';

/** Faker seeds a 32-bit Mersenne Twister; larger seeds would alias smaller ones. */
const MAX_SEED = 2 ** 32 - 1;

export async function migrate(args: string[]): Promise<void> {
  parse(args, {});
  const applied = await withDb(async (_db, applied) => applied);
  console.log(applied.length === 0 ? 'already up to date' : applied.map((name) => `applied ${name}`).join('\n'));
}

export async function seed(args: string[]): Promise<void> {
  const { values } = parse(args, { demo: { type: 'boolean' }, seed: { type: 'string' } });
  if (values.seed !== undefined && !values.demo) throw new UsageError('--seed only applies with --demo');
  const demoSeed = integerOption('--seed', values.seed, 0, MAX_SEED) ?? DEMO_SEED;

  await withDb(async (db) => {
    const now = new Date();
    const reference = await seedReference(db, { now });
    console.log(`reference data: ${reference.universities} universities, ${reference.holidays} holidays`);
    if (!values.demo) return;
    const demo = await seedDemo(db, { seed: demoSeed, now });
    console.log(
      demo.users === 0
        ? 'demo data: skipped, the database already has users'
        : `demo data (seed ${demoSeed}): ${demo.users} users, ${demo.decks} decks, ${demo.aiMessages} tutor messages, ${demo.studyRooms} study rooms`,
    );
  });
}
