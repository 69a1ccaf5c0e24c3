// The spec's named examples as runnable pairs: for a response example named N, the request assembled from the
// examples named N of the operation's parameters and request body. Pairs are matched by name only, the way
// contract testers (Specmatic and the like) read them; redocly.yaml's house rule checks that every pair is complete.
// As Specmatic does, a request example whose name no response example of the operation has is paired with the
// operation's body-less response (a DELETE's 204, a 304): a name shared through a parameter that several operations
// use becomes a request that must answer that status.
import { readFileSync } from 'node:fs';
import type { Document } from 'openapi-backend';

/** Responses whose cause is not in the parameters or the body (credentials, method, size, rate, the server), as the
 * lint rule has them. */
const UNPAIRED_STATUSES = new Set<string>(
  JSON.parse(readFileSync(new URL('../../../redocly/unpaired-statuses.json', import.meta.url), 'utf8')),
);

export interface ExampleRequest {
  method: string;
  /** The path with its parameters filled in. */
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body?: unknown;
}

export interface ExamplePair {
  operationId: string;
  name: string;
  status: number;
  request: ExampleRequest;
  /** The response example's value. */
  expected: unknown;
  /** The response has no body (a 204 or 304 paired by a request example's name alone). */
  bodyless: boolean;
  /** Fields (by name, at any depth) whose value differs per instance or run: compared by schema only. */
  varies: string[];
  secured: boolean;
}

interface Example {
  value?: unknown;
  'x-varies'?: string[];
  /** Why no single request produces this response (e.g. it takes two); such an example needs no request example. */
  'x-unpaired'?: string;
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  examples?: Record<string, Example>;
}
interface Operation {
  operationId: string;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  security?: unknown[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * Every pair of the spec, plus the first success example of each operation that takes no parameters and no body
 * (its one request). `missing` lists pairs whose request lacks a required part, which the lint rule refuses.
 */
export function examplePairs(spec: Document): { pairs: ExamplePair[]; missing: string[] } {
  const resolve = <T>(node: unknown): T => {
    let current = node as { $ref?: string };
    while (current?.$ref)
      current = current.$ref
        .slice(2)
        .split('/')
        .reduce((o: any, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    return current as T;
  };
  const pairs: ExamplePair[] = [];
  const missing: string[] = [];
  for (const [template, pathItem] of Object.entries(spec.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (pathItem as Record<string, unknown>)[method] as Operation | undefined;
      if (!operation) continue;
      // An operation's parameter replaces the path's parameter of the same name and location.
      const own = (operation.parameters ?? []).map((p) => resolve<Parameter>(p));
      const inherited = ((pathItem as { parameters?: unknown[] }).parameters ?? [])
        .map((p) => resolve<Parameter>(p))
        .filter((p) => !own.some((o) => o.name === p.name && o.in === p.in));
      const parameters = [...inherited, ...own];
      const body = resolve<
        { required?: boolean; content: Record<string, { examples?: Record<string, Example> }> } | undefined
      >(operation.requestBody);
      const bodyExamples = body?.content['application/json']?.examples ?? {};
      const takesInput = parameters.length > 0 || body !== undefined;
      const secured = (operation.security ?? spec.security ?? []).length > 0;
      const assemble = (name: string) => {
        const request: ExampleRequest = { method, path: template, query: {}, headers: {} };
        const lacking: string[] = [];
        for (const parameter of parameters) {
          const value = parameter.examples?.[name] ? resolve<Example>(parameter.examples[name]).value : undefined;
          if (value === undefined) {
            if (parameter.required) lacking.push(`${parameter.in} parameter ${parameter.name}`);
            continue;
          }
          if (parameter.in === 'path')
            request.path = request.path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
          else if (parameter.in === 'query') request.query[parameter.name] = value;
          else if (parameter.in === 'header') request.headers[parameter.name] = String(value);
        }
        if (bodyExamples[name]) request.body = resolve<Example>(bodyExamples[name]).value;
        else if (body?.required) lacking.push('request body');
        return { request, lacking };
      };
      const requestNames = new Set([
        ...parameters.flatMap((p) => Object.keys(p.examples ?? {})),
        ...Object.keys(bodyExamples),
      ]);
      const responseNames = new Set<string>();
      const bodyless: string[] = [];
      for (const [status, responseNode] of Object.entries(operation.responses)) {
        const response = resolve<{ content?: Record<string, { examples?: Record<string, Example> }> }>(responseNode);
        for (const media of Object.values(response.content ?? {}))
          for (const name of Object.keys(media.examples ?? {})) responseNames.add(name);
        if (!response.content && !UNPAIRED_STATUSES.has(status)) bodyless.push(status);
      }
      for (const status of bodyless) {
        for (const name of [...requestNames].filter((n) => !responseNames.has(n))) {
          const { request, lacking } = assemble(name);
          if (lacking.length > 0)
            missing.push(
              `${operation.operationId} ${status} (paired by name) example ${name}: no request example of that name for ${lacking.join(', ')}`,
            );
          else
            pairs.push({
              operationId: operation.operationId,
              name,
              status: Number(status),
              request,
              expected: undefined,
              bodyless: true,
              varies: [],
              secured,
            });
        }
      }

      for (const [status, responseNode] of Object.entries(operation.responses)) {
        if (UNPAIRED_STATUSES.has(status)) continue;
        const response = resolve<{ content?: Record<string, { examples?: Record<string, Example> }> }>(responseNode);
        for (const media of Object.values(response.content ?? {})) {
          const named = Object.entries(media.examples ?? {}).map(
            ([name, example]) => [name, resolve<Example>(example)] as const,
          );
          // Without input there is one request: it answers the first success example.
          const runnable = takesInput ? named : status.startsWith('2') ? named.slice(0, 1) : [];
          for (const [name, example] of runnable) {
            const { request, lacking } = assemble(name);
            const requested = parameters.some((p) => p.examples?.[name]) || bodyExamples[name] !== undefined;
            if (example['x-unpaired'] && !requested) continue;
            if (takesInput && (!requested || lacking.length > 0)) {
              missing.push(
                `${operation.operationId} ${status} example ${name}: no request example of that name${lacking.length ? ` for ${lacking.join(', ')}` : ''}`,
              );
              continue;
            }
            pairs.push({
              operationId: operation.operationId,
              name,
              status: Number(status),
              request,
              expected: example.value,
              bodyless: false,
              varies: example['x-varies'] ?? [],
              secured,
            });
          }
        }
      }
    }
  }
  return { pairs, missing };
}

/** `value` without the fields named in `varies`, at any depth. */
export function withoutVarying(value: unknown, varies: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutVarying(item, varies));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !varies.includes(key))
      .map(([key, item]) => [key, withoutVarying(item, varies)]),
  );
}
