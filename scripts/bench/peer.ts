// The bench's yardstick for writes: a naive Express 5 + pg service doing each write scenario's durable minimum, as a
// team would write it in an afternoon. The bearer credential is looked up by its SHA-256 in a table, then the same
// rows the student's write must keep are written in one transaction with synchronous_commit on: a task is one
// INSERT … RETURNING; a review locks the card, steps SM-2 in JS, updates the card and logs the review. No validation
// by a spec, no idempotency, no events, no limits, no request log. Bare Express does no durable write, so it cannot
// price one; this does, in the same run, pinned and accounted like the service (issue 35).
// Its tables live in the schema `peer` of the bench's database (scripts/bench/peer-schema.ts).
// Run as its own process: DATABASE_URL=… node scripts/bench/peer.ts; prints `listening on http://…`.
import { createHash } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import pg from 'pg';
import { sm2Step, type Grade } from '../../domain/srs.ts';
import { PEER_APPLICATION_NAME } from './peer-schema.ts';
const DAY_MS = 86_400_000;

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  application_name: PEER_APPLICATION_NAME,
  // As many as the load generator's connections at most; a bound on each wait, as any service needs.
  max: 20,
  connectionTimeoutMillis: 5_000,
  options: '-c synchronous_commit=on -c statement_timeout=5000 -c search_path=peer',
});
pool.on('error', () => {});

const app = express();
app.use(express.json());

/** The student whose key the bearer credential is, or 401. */
async function student(req: Request): Promise<string | undefined> {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token) return undefined;
  const hash = createHash('sha256').update(token).digest('hex');
  const { rows } = await pool.query<{ student_id: string }>('select student_id from keys where hash = $1', [hash]);
  return rows[0]?.student_id;
}

type Handler = (req: Request, res: Response, studentId: string) => Promise<unknown>;
const route = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
  try {
    const studentId = await student(req);
    if (!studentId) return void res.status(401).json({ error: 'unauthorized' });
    await handler(req, res, studentId);
  } catch (error) {
    next(error);
  }
};

app.get(
  '/api/tasks',
  route(async (req, res, studentId) => {
    const limit = Math.min(Number(req.query.limit) || 20, 100);
    const { rows } = await pool.query(
      `select id, title, course, due_at, status, priority, created_at from tasks
       where user_id = $1 order by due_at, id limit $2`,
      [studentId, limit],
    );
    res.json({ items: rows });
  }),
);

app.post(
  '/api/tasks',
  route(async (req, res, studentId) => {
    const { title, due_at, course } = req.body ?? {};
    if (typeof title !== 'string' || typeof due_at !== 'string') {
      return void res.status(400).json({ error: 'title and due_at are required' });
    }
    const { rows } = await pool.query(
      `insert into tasks (user_id, title, due_at, course) values ($1, $2, $3, $4)
       returning id, title, course, due_at, status, priority, created_at`,
      [studentId, title, due_at, course ?? null],
    );
    res.status(201).json(rows[0]);
  }),
);

app.post(
  '/api/flashcards/cards/:cardId/reviews',
  route(async (req, res, studentId) => {
    const grade = req.body?.grade;
    if (!Number.isInteger(grade) || grade < 0 || grade > 5) {
      return void res.status(400).json({ error: 'grade is 0..5' });
    }
    const client = await pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query<{ ease: number; repetitions: number; interval_days: number }>(
        'select ease, repetitions, interval_days from cards where id = $1 and user_id = $2 for update',
        [req.params.cardId, studentId],
      );
      const card = rows[0];
      if (!card) {
        await client.query('rollback');
        return void res.status(404).json({ error: 'no such card' });
      }
      const next = sm2Step(card, grade as Grade);
      const reviewedAt = new Date();
      const nextDueAt = new Date(reviewedAt.getTime() + next.interval_days * DAY_MS);
      await client.query(
        `update cards set ease = $2, repetitions = $3, interval_days = $4, next_due_at = $5, last_reviewed_at = $6
         where id = $1`,
        [req.params.cardId, next.ease, next.repetitions, next.interval_days, nextDueAt, reviewedAt],
      );
      const review = await client.query(
        `insert into reviews (card_id, user_id, grade, reviewed_at, ease, repetitions, interval_days, next_due_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         returning id, card_id, grade, reviewed_at, ease, repetitions, interval_days, next_due_at`,
        [req.params.cardId, studentId, grade, reviewedAt, next.ease, next.repetitions, next.interval_days, nextDueAt],
      );
      await client.query('commit');
      res.status(201).json(review.rows[0]);
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }),
);

app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
  res.status(503).json({ error: error instanceof Error ? error.message : String(error) });
});

const server = app.listen(0, '127.0.0.1', (error?: Error) => {
  if (error) throw error;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stderr.write(`peer listening on http://127.0.0.1:${port}\n`);
});
process.once('SIGTERM', () => server.close(() => void pool.end().finally(() => process.exit(0))));
