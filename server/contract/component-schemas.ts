// The general spec's named schemas as validators, for input that arrives inside another body (a sync command's
// `args`): checked by the schema of the operation it mirrors, compiled from the bundled spec with the options and
// formats openapi-backend's request validation uses (contract.ts), so both paths accept and refuse the same input.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FieldError } from '../../domain/errors.ts';
import { bundledSpecFile } from './bundled-specs.ts';
import { fieldError } from './field-errors.ts';
import { addServiceFormats } from './formats.ts';
import type { components } from '../../generated/general/types.ts';

type SchemaName = keyof components['schemas'];

let ajv: Ajv2020 | undefined;
const compiled = new Map<SchemaName, ValidateFunction>();

/** Compiled on first use, as openapi-backend's `quick` mode compiles an operation's validator. */
function validatorOf(name: SchemaName): ValidateFunction {
  let validate = compiled.get(name);
  if (validate) return validate;
  if (!ajv) {
    ajv = new Ajv2020({ useDefaults: true, allErrors: true, coerceTypes: true, strict: false });
    addServiceFormats(ajv);
    ajv.addSchema(JSON.parse(readFileSync(bundledSpecFile('general'), 'utf8')), 'general');
  }
  validate = ajv.getSchema(`general#/components/schemas/${name}`)!;
  compiled.set(name, validate);
  return validate;
}

/** The errors of `value` against the spec's schema `name`, each path under `at` (empty: valid). */
export function schemaErrors(name: SchemaName, value: unknown, at: string): FieldError[] {
  const validate = validatorOf(name);
  if (validate(value)) return [];
  const under = `/${at.replaceAll('.', '/')}`;
  return (validate.errors ?? []).map((error) => fieldError({ ...error, instancePath: under + error.instancePath }));
}
