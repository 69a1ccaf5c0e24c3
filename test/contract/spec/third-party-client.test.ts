// What a client team gets from the bundled specs with a third-party generator (@hey-api/openapi-ts, offline): a client
// of each surface that typechecks under `strict`, with the types a receiver or a stream reader needs by name — the
// discriminated `WebhookEvent` (narrowed by `type`), each event payload of both streams, the named variants — and a
// `NewAccount` that still has its password. A usage file compiled against the output checks each of them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { surfaces, type Surface } from '../../../server/contract/surfaces.ts';

/** Code a client team would write against the generated types; it compiles only if every name and shape is there. */
const USAGE: Record<Surface, string> = {
  general: `
import type { WebhookEvent, TutorQueued, TutorMessageStarted, TutorMessageDelta, TutorMessageCompleted, TutorStreamError,
  ReadinessSnapshot, ReadinessMoved, ReadinessStreamError, NewAccount, TaskEventData, ExportedTask, Card, CardFsrsState, LoopAction, LoopItem,
  PayerByAccountId, PayerByEmail } from './general/types.gen';
import { createAccount, streamTutorChat } from './general/sdk.gen';

export function receive(event: WebhookEvent): string {
  switch (event.type) {
    case 'task.created': return event.data.object.title;
    case 'exam.updated': return event.data.previous_attributes.subject ?? event.data.object.subject;
    case 'payment.succeeded': return event.data.object.plan;
    default: return event.id;
  }
}
export type TutorEvent = TutorQueued | TutorMessageStarted | TutorMessageDelta | TutorMessageCompleted | TutorStreamError;
export const position = (queued: TutorQueued): number => queued.position;
export const deltaText = (delta: TutorMessageDelta): string => delta.text;
export const readinessOf = (event: ReadinessSnapshot | ReadinessMoved): number => event.exams.length;
export const streamCode = (error: ReadinessStreamError | TutorStreamError): string => error.code;
export const account: NewAccount = { email: 'dana@example.com', password: 'correct horse battery', nickname: 'dana', first_name: 'Dana' };
export const title = (data: TaskEventData, row: ExportedTask): string => data.object.title + row.title;
export const memory = (card: Card): CardFsrsState['state'] | 'none' => (card.fsrs === null ? 'none' : card.fsrs.state);
export const about = (action: LoopAction): LoopItem['type'] | undefined => action.item?.type;
export const payer = (who: PayerByAccountId | PayerByEmail): string => ('email' in who ? who.email : who.account_id);
export const calls = [createAccount, streamTutorChat];
`,
  'partner-v1': `
import type { UniversityDetail, UniversityDetailFields } from './partner-v1/types.gen';
import { getUniversity } from './partner-v1/sdk.gen';

export const xp = (detail: UniversityDetail, fields: UniversityDetailFields): number => detail.total_xp + fields.active_students_30d + detail.name.length;
export const calls = [getUniversity];
`,
};

describe('spec: a third-party generator (@hey-api/openapi-ts) on the bundled specs', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hey-api-'));
    for (const surface of surfaces) {
      await createClient({
        input: `generated/${surface}/openapi.json`,
        output: join(dir, surface),
        logs: { level: 'silent', file: false },
      });
      writeFileSync(join(dir, `${surface}-usage.ts`), USAGE[surface]);
    }
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('generates a client of each surface that, with code using its event and variant types, typechecks under strict', () => {
    const program = ts.createProgram(
      surfaces.map((surface) => join(dir, `${surface}-usage.ts`)),
      {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
        types: [],
        skipLibCheck: true,
      },
    );
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          ts.flattenDiagnosticMessageText(d.messageText, '\n') +
          (d.file ? ` (${d.file.fileName.slice(dir.length + 1)})` : ''),
      );
    assert.deepEqual(errors, []);
  });
});
