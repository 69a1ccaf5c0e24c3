// The compiler is what keeps handlers and spec in step. These tests prove that it does: a registry with a
// missing, misspelled or extra handler does not compile. They compile small files with the project's own
// tsconfig, so they check the real types, not a copy.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = new URL('../../', import.meta.url).pathname;

/**
 * Every registry below in one program: each file's own diagnostics are its result. The project's types are read and
 * checked once, not once per case (four programs cost four times the same seconds).
 */
function typeErrorsOfEach(sources: Record<string, string>): Record<string, string[]> {
  const dir = mkdtempSync(join(root, 'test/contract/.tmp-'));
  try {
    const files = Object.fromEntries(Object.keys(sources).map((name) => [name, join(dir, `${name}.ts`)]));
    for (const [name, source] of Object.entries(sources)) writeFileSync(files[name]!, source);
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    assert.ok(config, 'tsconfig.json parses');
    const program = ts.createProgram(Object.values(files), config.options);
    return Object.fromEntries(
      Object.entries(files).map(([name, file]) => [
        name,
        ts
          .getPreEmitDiagnostics(program, program.getSourceFile(file))
          .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const header = `
import type { PartnerHandlers } from '../../../handlers/partner-v1/types.ts';
import { partnerV1Handlers } from '../../../handlers/partner-v1/index.ts';
const { getStats, ...allButGetStats } = partnerV1Handlers;
`;

const registries = {
  ok: `${header}\nexport const ok: PartnerHandlers = { ...allButGetStats, getStats };\n`,
  missing: `${header}\nexport const missing: PartnerHandlers = { ...allButGetStats };\n`,
  extra: `${header}\nexport const extra: PartnerHandlers = { ...allButGetStats, getStats, getStatistics: getStats };\n`,
  wrongBody: `${header}
export const wrongBody: PartnerHandlers['getStats'] = async () => ({ status: 200, body: { total_users: 'many' } as never as { total_users: string } });
`,
};

describe('handler registry typing', function () {
  this.timeout(120_000);
  let typeErrors: Record<keyof typeof registries, string[]>;
  before(() => (typeErrors = typeErrorsOfEach(registries) as typeof typeErrors));

  it('accepts the real registry', () => {
    assert.deepEqual(typeErrors.ok, []);
  });

  it('rejects a registry without a handler for an operation', () => {
    const errors = typeErrors.missing;
    assert.ok(
      errors.some((e) => /getStats/.test(e)),
      errors.join('\n'),
    );
  });

  it('rejects a handler for an operation the spec does not have', () => {
    const errors = typeErrors.extra;
    assert.ok(
      errors.some((e) => /getStatistics/.test(e)),
      errors.join('\n'),
    );
  });

  it('rejects a handler whose body does not match the documented response', () => {
    const errors = typeErrors.wrongBody;
    assert.ok(
      errors.some((e) => /not assignable/.test(e)),
      errors.join('\n'),
    );
  });
});
