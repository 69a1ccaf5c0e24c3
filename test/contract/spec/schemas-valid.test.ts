// Every schema of every bundled spec is a valid JSON Schema 2020-12. The service's validators do not check it when
// they compile (server/contract/contract.ts: Ajv would compile the meta-schema again for each of its hundreds of
// validators), so it is checked here, once, as Ajv would have: against the meta-schema, with the formats it knows.
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { bundledSpecs } from '../../../server/contract/bundled-specs.ts';
import { addServiceFormats } from '../../../server/contract/formats.ts';

/** The spec's schemas by their place in it: its named schemas, and every `schema` of a parameter, body or header. */
function schemasOf(document: unknown): Array<{ at: string; schema: object }> {
  const found: Array<{ at: string; schema: object }> = [];
  const visit = (value: unknown, at: string, isSchema: boolean) => {
    if (typeof value !== 'object' || value === null) return;
    // A schema is checked whole; the schemas inside it are the meta-schema's to check.
    if (isSchema) return void found.push({ at, schema: value });
    for (const [key, child] of Object.entries(value)) {
      const named = at === '#/components/schemas';
      visit(child, `${at}/${key}`, named || key === 'schema');
    }
  };
  visit(document, '#', false);
  return found;
}

describe('the schemas of the bundled specs', () => {
  for (const { surface, definition } of bundledSpecs()) {
    it(`${surface}: every schema is valid JSON Schema 2020-12`, () => {
      const ajv = new Ajv2020({ strict: false });
      addServiceFormats(ajv);
      const schemas = schemasOf(definition);
      assert.ok(schemas.length > 10, `found ${schemas.length} schemas`);
      const invalid = schemas.flatMap(({ at, schema }) =>
        ajv.validateSchema(schema) ? [] : [`${at}: ${ajv.errorsText(ajv.errors)}`],
      );
      assert.deepEqual(invalid, []);
    });
  }

  it('finds a schema the meta-schema refuses', () => {
    const ajv = new Ajv2020({ strict: false });
    const [broken] = schemasOf({ components: { schemas: { Broken: { type: 'text', minLength: -1 } } } });
    assert.equal(broken!.at, '#/components/schemas/Broken');
    assert.equal(ajv.validateSchema(broken!.schema), false);
  });
});
