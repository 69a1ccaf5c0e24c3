// House rules that Redocly's configurable rules cannot say. Loaded by redocly.yaml (`plugins`).
import { readFileSync } from 'node:fs';

/** Statuses whose cause is not in the request's parameters or body: credentials, method, size, rate, the server.
 * test/contract/examples/ reads the same list. */
const UNPAIRED_STATUSES = JSON.parse(readFileSync(new URL('./unpaired-statuses.json', import.meta.url), 'utf8'));

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * `house/response-examples-paired`: on an operation with parameters or a body, every named response example has
 * request examples of the same name — on every required parameter and on a required body, and on at least one
 * parameter or the body — so a contract tester that pairs examples by name (Specmatic and the like) sends the request
 * that produces it. Exempt: UNPAIRED_STATUSES, and examples marked `x-unpaired` (saying why) that need more than one
 * request.
 */
function responseExamplesPaired() {
  const exempt = new Set(UNPAIRED_STATUSES);
  return {
    PathItem(pathItem, ctx) {
      const resolve = (node, from) => {
        if (!node || typeof node !== 'object' || !('$ref' in node)) return { node, from };
        const resolved = ctx.resolve(node, from);
        return resolve(resolved.node, resolved.location?.source.absoluteRef ?? from);
      };
      const here = ctx.location.source.absoluteRef;
      for (const method of METHODS) {
        const operation = pathItem[method];
        if (!operation) continue;
        const parameters = [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])]
          .map((p) => resolve(p, here).node)
          .filter(Boolean);
        const body = resolve(operation.requestBody, here).node;
        if (parameters.length === 0 && !body) continue;
        const bodyExamples = new Set(
          Object.values(body?.content ?? {}).flatMap((media) => Object.keys(media.examples ?? {})),
        );
        const requested = (name) => parameters.some((p) => p.examples && name in p.examples) || bodyExamples.has(name);

        for (const [status, responseNode] of Object.entries(operation.responses ?? {})) {
          if (exempt.has(status)) continue;
          const response = resolve(responseNode, here);
          for (const media of Object.values(response.node?.content ?? {})) {
            for (const [name, exampleNode] of Object.entries(media.examples ?? {})) {
              const example = resolve(exampleNode, response.from).node;
              if (example?.['x-unpaired'] && !requested(name)) continue;
              const lacking = [
                ...parameters
                  .filter((p) => p.required && !(p.examples && name in p.examples))
                  .map((p) => `${p.in} parameter \`${p.name}\``),
                ...(body?.required && !bodyExamples.has(name) ? ['the request body'] : []),
              ];
              if (requested(name) && lacking.length === 0) continue;
              ctx.report({
                message: `Response example \`${name}\` (${status}) of ${operation.operationId ?? method} has no request example of the same name${lacking.length ? ` on ${lacking.join(', ')}` : ''}.`,
                location: ctx.location.child([method, 'responses', status]),
              });
            }
          }
        }
      }
    },
  };
}

export default function houseRules() {
  return {
    id: 'house',
    rules: { oas3: { 'response-examples-paired': responseExamplesPaired } },
  };
}
