// Every event payload a test sees is checked against the general spec's `webhooks` section: the schema of the
// request body the spec says a receiver of that kind gets. The kinds seen are recorded, so coverage can tell which
// of the documented kinds no test produced.
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { bundledSpecs } from '../../server/contract/bundled-specs.ts';
import { addServiceFormats } from '../../server/contract/formats.ts';
import { runState } from './run-state.ts';

let compiled: Map<string, ValidateFunction> | undefined;

function validators(): Map<string, ValidateFunction> {
  if (compiled) return compiled;
  const general = bundledSpecs().find(({ surface }) => surface === 'general')!.definition as unknown as {
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addServiceFormats(ajv);
  ajv.addSchema(general, 'general');
  const map = new Map<string, ValidateFunction>();
  for (const type of Object.keys(general.webhooks))
    map.set(
      type,
      ajv.getSchema(`general#/webhooks/${jsonPointer(type)}/post/requestBody/content/application~1json/schema`)!,
    );
  return (compiled = map);
}

/** The kinds of event the spec documents. */
export function documentedEventTypes(): string[] {
  return [...validators().keys()];
}

/** Fails unless `event` is a valid payload of the kind it names. */
export function assertEventConforms(event: { type: string }): void {
  const validate = validators().get(event.type);
  assert.ok(validate, `event type ${event.type} is not in the spec's webhooks`);
  assert.ok(
    validate(event),
    `${event.type} payload breaks the spec:\n  ${JSON.stringify(validate.errors, null, 2)}\n${JSON.stringify(event, null, 2)}`,
  );
  runState.eventTypesSeen.add(event.type);
}

function jsonPointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
