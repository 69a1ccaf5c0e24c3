// The bench's yardstick: a bare Express 5 app answering every scenario with the very status and JSON the service
// gave, held in memory. No validation, no auth, no limits, no logging, no database: the floor that the framework
// itself costs, measured in the same run (machines differ up to ~3x from day to day, so only ratios compare).
// Run as its own process: node scripts/bench/baseline.ts RESPONSES_JSON_FILE; prints `listening on http://…`.
import { readFileSync } from 'node:fs';
import express from 'express';

export interface CannedResponse {
  method: string;
  /** Path and query, as the scenario requests it. */
  url: string;
  /** Which credential header the request carries: the same URL answers 200 with a key and 401 without. */
  credentialHeader: string | undefined;
  status: number;
  contentType: string;
  body: string;
}

const responses = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CannedResponse[];
const CREDENTIAL_HEADERS = ['x-service-api-key', 'authorization'];
// Ids in a path are one key: the many-students review scenario sends each student's own cards' paths.
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
// A sync token is one key too: the sync's scenario sends each page's token (its pages are alike in size).
const SYNC_TOKEN = /sync_token=[^&]*/g;
const requestKey = (method: string, url: string, credentialHeader: string | undefined) =>
  `${method} ${url.replace(UUID, ':id').replace(SYNC_TOKEN, 'sync_token=:token')} ${credentialHeader ?? '-'}`;
const byRequest = new Map(responses.map((r) => [requestKey(r.method, r.url, r.credentialHeader), r]));

const app = express();
// Bodies are parsed as Express apps do, so a POST scenario pays for its JSON here too.
app.use(express.json());
app.use((req, res) => {
  const canned = byRequest.get(
    requestKey(
      req.method,
      req.originalUrl,
      CREDENTIAL_HEADERS.find((name) => req.headers[name] !== undefined),
    ),
  );
  if (!canned) return void res.status(404).json({ error: 'no canned response' });
  res.status(canned.status).type(canned.contentType).send(canned.body);
});
const server = app.listen(0, '127.0.0.1', (error?: Error) => {
  if (error) throw error;
  const address = server.address();
  process.stderr.write(
    `baseline listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`,
  );
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
