// The partner v1 lock: what changed between a released spec and the current one, and which changes break
// clients. api-smart-diff does the diffing (matching operations, parameters by name, $refs resolved) and a first
// classification; the house rules below correct it where it is wrong or laxer than our promise in the spec's
// "Stability" section (fields, parameters and enum values never removed, types never narrowed).
import { readdirSync, readFileSync } from 'node:fs';
import { apiCompare } from 'api-smart-diff';
import { canonicalSpec } from './spec-canonical.ts';
import { describeChange, type JsonPath } from './spec-describe.ts';
import type { Surface } from '../server/contract/surfaces.ts';

export type ChangeClass = 'breaking' | 'non-breaking' | 'deprecated';
export interface SpecChange {
  class: ChangeClass;
  action: 'add' | 'remove' | 'replace' | 'rename';
  /** Names the change and the operation it touches, e.g. "removed response field `your_key` of getHealth 200". */
  message: string;
}

interface Diff {
  type: string;
  action: SpecChange['action'];
  path: JsonPath;
  before?: unknown;
  after?: unknown;
}

/** Every change of `after` against `before` that a client can notice; documentation-only edits are left out. */
export function compareSpecs(before: object, after: object): SpecChange[] {
  const [from, to] = [canonicalSpec(before), canonicalSpec(after)];
  const { diffs } = apiCompare(from, to) as { diffs: Diff[] };
  const changes: SpecChange[] = [];
  for (const diff of diffs.filter(seenByClients)) {
    const cls = houseClass(diff, to);
    if (cls === 'annotation') continue;
    changes.push({ class: cls, action: diff.action, message: messageFor(diff, from, to) });
  }
  return changes;
}

/** A describer gap must never hide a change: fall back to the raw JSON path. */
function messageFor(diff: Diff, before: object, after: object): string {
  try {
    return describeChange(diff, before, after);
  } catch {
    return `${diff.action} ${diff.path.join('.')}`;
  }
}

/**
 * Reusable components reach clients only through the operations that use them, and api-smart-diff reports those
 * uses under `paths` with the operation named; security schemes are the exception (operations name them only).
 */
function seenByClients(diff: Diff): boolean {
  const [root, section] = diff.path;
  return (
    root === 'paths' ||
    root === 'security' ||
    root === 'webhooks' ||
    (root === 'components' && section === 'securitySchemes')
  );
}

type Classified = ChangeClass | 'annotation';

function houseClass(diff: Diff, after: object): Classified {
  const { path, action } = diff;
  const last = path.at(-1);
  const keyword = path.at(-2);
  // Additions the spec promises in a minor version, which every client already handles: a value of an enum that
  // declares itself open (`x-extensible-enum: true`, its description telling clients to ignore values they do not
  // know: event kinds, scopes), a new kind of webhook (endpoints subscribe to kinds by name), and a new scope of an
  // OAuth flow (granted only to a client allowed it). Declaring an enum open is a promise reviewed with the spec.
  if (action === 'add' && keyword === 'enum' && declaredOpen(after, path.slice(0, -1))) return 'non-breaking';
  // The declaration itself changes no valid document; it tells clients what to expect, and the changelog lists it.
  if (action === 'add' && last === 'x-extensible-enum') return 'non-breaking';
  if (action === 'add' && path[0] === 'webhooks' && path.length === 2) return 'non-breaking';
  if (action === 'add' && path[0] === 'components' && path[1] === 'securitySchemes' && path.at(-2) === 'scopes')
    return 'non-breaking';
  // Examples are documentation; api-smart-diff leaves their edits unclassified.
  if (path.includes('examples') || path.includes('example')) return 'annotation';
  // The operationId names the SDK method and the handler: renaming it renames the operation.
  if (last === 'operationId' && path[0] === 'paths' && action !== 'add') return 'breaking';
  // "Never remove a field": also from request bodies (a client still sending it may be refused).
  if (keyword === 'properties' && action === 'remove') return 'breaking';
  // "Never remove an enum value", wherever it is (api-smart-diff allows it in responses).
  if (keyword === 'enum' && action === 'remove') return 'breaking';
  // Removing one of the accepted ways to authenticate locks out the clients that use it.
  if ((path[0] === 'security' || keyword === 'security' || path.at(-3) === 'security') && action === 'remove')
    return 'breaking';
  if (last === 'type' && action === 'replace') return typeChangeClass(path, diff.before, diff.after);
  // Server-sent events (`x-sse-events`, an extension api-smart-diff does not judge): their descriptions are
  // documentation, and a new value of an event's code is a new way for the server to end a stream, which every client
  // already handles by the documented default (an unknown code: reconnect; a refused reconnection: stop).
  if (path.includes('x-sse-events')) {
    if (last === 'description' || last === 'title') return 'annotation';
    if (keyword === 'enum' && action === 'add') return 'non-breaking';
  }
  const cls = diff.type;
  if (cls === 'breaking' || cls === 'non-breaking' || cls === 'deprecated' || cls === 'annotation') return cls;
  // Unclassified: a change the tool cannot judge. A lock that guesses would let a break through.
  return 'breaking';
}

/** Whether the schema holding the enum at `enumPath` declares itself open. */
function declaredOpen(doc: object, enumPath: JsonPath): boolean {
  return (
    (nodeAt(doc, enumPath.slice(0, -1)) as { 'x-extensible-enum'?: unknown } | undefined)?.['x-extensible-enum'] ===
    true
  );
}

/** The node at `path`, following each `$ref` on the way (api-smart-diff's paths run through resolved references). */
function nodeAt(doc: object, path: JsonPath): unknown {
  const resolve = (node: any): any => {
    let current = node;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 32; hops++) {
      current = current.$ref
        .slice(2)
        .split('/')
        .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    }
    return current;
  };
  let node: any = doc;
  for (const key of path) {
    node = resolve(node)?.[key];
    if (node === undefined) return undefined;
  }
  return resolve(node);
}

/**
 * A request may accept more types than before (integer → number), a response may send fewer; anything else
 * breaks someone. api-smart-diff calls every type change of a response non-breaking.
 */
function typeChangeClass(path: JsonPath, before: unknown, after: unknown): Classified {
  const types = (t: unknown) => (Array.isArray(t) ? t : [t]) as string[];
  const within = (a: string[], b: string[]) =>
    a.every((t) => b.includes(t) || (t === 'integer' && b.includes('number')));
  const inResponse = path.includes('responses');
  const ok = inResponse ? within(types(after), types(before)) : within(types(before), types(after));
  return ok ? 'non-breaking' : 'breaking';
}

/** Where a surface's released snapshots live, and its current bundled spec. */
export const releasedDirOf = (surface: Surface) => new URL(`../spec/${surface}/released/`, import.meta.url);
export const currentSpecOf = (surface: Surface) => new URL(`../generated/${surface}/openapi.json`, import.meta.url);
/** Each surface's generated changelog: partner v1's is the project's CHANGELOG.md. */
export const changelogOf = (surface: Surface) =>
  new URL(surface === 'partner-v1' ? '../CHANGELOG.md' : `../CHANGELOG-${surface}.md`, import.meta.url);

export const RELEASED_DIR = releasedDirOf('partner-v1');
export const CURRENT_SPEC = currentSpecOf('partner-v1');

/** The released snapshots by version, oldest first (files are named openapi-<semver>.json). */
export function releasedVersions(dir: URL = RELEASED_DIR): string[] {
  return readdirSync(dir)
    .map((file) => /^openapi-(\d+\.\d+\.\d+)\.json$/.exec(file)?.[1])
    .filter((v): v is string => v !== undefined)
    .sort(compareVersions);
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}

export function readJson(file: string | URL): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Problems with the current spec's info.version against the last release: a locked surface keeps its major version and never goes back. */
export function versionProblems(released: string, current: string): string[] {
  if (!/^\d+\.\d+\.\d+$/.test(current)) return [`info.version ${current} is not a plain MAJOR.MINOR.PATCH version`];
  if (current.split('.')[0] !== released.split('.')[0])
    return [`info.version ${current} leaves major version ${released.split('.')[0]} of the locked surface`];
  if (compareVersions(current, released) < 0) return [`info.version ${current} is lower than the released ${released}`];
  return [];
}
