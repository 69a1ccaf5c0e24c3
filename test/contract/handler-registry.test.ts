// The compiler is what keeps handlers and spec in step. These tests prove that it does: a registry with a
// missing, misspelled or extra handler does not compile. They compile small files with the project's own
// tsconfig, so they check the real types, not a copy.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = new URL('../../', import.meta.url).pathname;

function typeErrors(source: string): string[] {
  const dir = mkdtempSync(join(root, 'test/contract/.tmp-'));
  try {
    const file = join(dir, 'registry.ts');
    writeFileSync(file, source);
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    assert.ok(config, 'tsconfig.json parses');
    const program = ts.createProgram([file], config.options);
    return ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const header = `
import type { PartnerHandlers } from '../../../handlers/partner-v1/types.ts';
import { partnerV1Handlers } from '../../../handlers/partner-v1/index.ts';
const { getStats, ...allButGetStats } = partnerV1Handlers;
`;

describe('handler registry typing', function () {
  this.timeout(120_000);

  it('accepts the real registry', () => {
    assert.deepEqual(
      typeErrors(`${header}\nexport const ok: PartnerHandlers = { ...allButGetStats, getStats };\n`),
      [],
    );
  });

  it('rejects a registry without a handler for an operation', () => {
    const errors = typeErrors(`${header}\nexport const missing: PartnerHandlers = { ...allButGetStats };\n`);
    assert.ok(
      errors.some((e) => /getStats/.test(e)),
      errors.join('\n'),
    );
  });

  it('rejects a handler for an operation the spec does not have', () => {
    const errors = typeErrors(
      `${header}\nexport const extra: PartnerHandlers = { ...allButGetStats, getStats, getStatistics: getStats };\n`,
    );
    assert.ok(
      errors.some((e) => /getStatistics/.test(e)),
      errors.join('\n'),
    );
  });

  it('rejects a handler whose body does not match the documented response', () => {
    const errors = typeErrors(`${header}
export const wrongBody: PartnerHandlers['getStats'] = async () => ({ status: 200, body: { total_users: 'many' } as never as { total_users: string } });
`);
    assert.ok(
      errors.some((e) => /not assignable/.test(e)),
      errors.join('\n'),
    );
  });
});
