// demo credentials: the demo partner key, the demo student's password and personal key of an embedded database,
// made anew. npm start prints them once, on the first start; they are stored as hashes, so "again" means new ones.
import { remakeDemoCredentials } from '../demo-student.ts';
import { note, parse, print, withDb } from './shared.ts';

export async function credentials(args: string[]): Promise<void> {
  parse(args, {});
  const demo = await withDb((db) => remakeDemoCredentials(db, new Date()));
  if (!demo)
    throw new Error(
      'this database has no demo student: demo data is made on the first start of an embedded database (npm start without DATABASE_URL)',
    );
  note(
    `new demo credentials; the previous demo keys are revoked and every sign-in of ${demo.student.email} has ended\n` +
      "shown once, below: the partner key (X-Service-API-Key on /api/v1), the student's password, the student's personal key (every scope)\n",
  );
  print(`partner key:  ${demo.partnerKey}`);
  print(`student:      ${demo.student.email}`);
  print(`password:     ${demo.student.password}`);
  print(`personal key: ${demo.student.key}`);
}
