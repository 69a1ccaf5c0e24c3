// One line of plain English for one difference between two bundled specs, naming what changed and the
// operation it touches: "removed response field `your_key` of getHealth 200". Used for the lock's failures and
// for the changelog, so both read the same.
export type JsonPath = Array<string | number>;

interface Difference {
  action: 'add' | 'remove' | 'replace' | 'rename';
  path: JsonPath;
  before?: unknown;
  after?: unknown;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const VERB = { add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' } as const;
const code = (value: unknown) => '`' + (typeof value === 'string' ? value : JSON.stringify(value)) + '`';

export function describeChange(diff: Difference, before: any, after: any): string {
  const { path, action } = diff;
  const verb = VERB[action];
  const [root, second] = path;
  if (root === 'paths' && path.length === 1 && action === 'rename')
    return `renamed path ${code(diff.before)} to ${code(diff.after)}`;
  if (root === 'security')
    return `${verb} security requirement ${code(Object.keys((diff.before ?? diff.after ?? {}) as object).join(' + '))} of the whole API`;
  if (root === 'components' && second === 'securitySchemes') {
    return `${verb} ${path.slice(3).join('.') || 'definition'} of security scheme ${code(path[2])}${fromTo(diff)}`;
  }
  if (root !== 'paths' || typeof second !== 'string') return `${verb} ${path.join('.')}${fromTo(diff)}`;

  const method = path[2];
  if (typeof method !== 'string' || !METHODS.includes(method))
    return `${verb} ${path.slice(2).join('.')} of path ${code(second)}${fromTo(diff)}`;
  const spec = action === 'add' ? after : before;
  const operation = spec.paths[second][method];
  const name = operation.operationId ?? `${method.toUpperCase()} ${second}`;
  const rest = path.slice(3);
  if (rest.length === 0) return `${verb} operation ${code(name)} (${method.toUpperCase()} ${second})`;
  const [part, key, ...deeper] = rest;

  if (part === 'operationId')
    return `renamed operation ${code(diff.before)} (${method.toUpperCase()} ${second}) to ${code(diff.after)}`;
  if (part === 'deprecated') return `${diff.after === true ? 'deprecated' : 'undeprecated'} operation ${code(name)}`;
  if (part === 'security') return `${verb} security requirement of ${name}${fromTo(diff)}`;
  if (part === 'parameters' && typeof key === 'number') {
    // A whole parameter added or removed is the diff's value; api-smart-diff's index is into its merged list.
    const whole = deeper.length === 0 ? (action === 'add' ? diff.after : diff.before) : undefined;
    const parameter = resolve(spec, whole ?? operation.parameters?.[key]) ?? {};
    const label = parameter.name ? `${parameter.in} parameter ${code(parameter.name)}` : `parameter #${key}`;
    if (deeper.length === 0) {
      return `${verb} ${action === 'add' ? (parameter.required ? 'required ' : 'optional ') : ''}${label} of ${name}`;
    }
    if (deeper[0] === 'required')
      return `${label} of ${name} is ${diff.after === true ? 'now required' : 'no longer required'}`;
    if (deeper[0] === 'schema') return describeSchema(diff, deeper.slice(1), label, name);
    return `${verb} ${deeper.join('.')} of ${label} of ${name}${fromTo(diff)}`;
  }
  if (part === 'requestBody') {
    if (key === undefined) return `${verb} request body of ${name}`;
    if (key === 'required')
      return `request body of ${name} is ${diff.after === true ? 'now required' : 'no longer required'}`;
    if (key === 'content' && deeper.length === 1) return `${verb} request media type ${code(deeper[0])} of ${name}`;
    if (key === 'content' && deeper[1] === 'schema') return describeSchema(diff, deeper.slice(2), 'request', name);
  }
  if (part === 'responses' && key !== undefined) {
    const where = `${name} ${key}`;
    if (deeper.length === 0) return `${verb} response status ${key} of ${name}`;
    const [section, item, ...inner] = deeper;
    if (section === 'headers' && item !== undefined && inner.length === 0)
      return `${verb} response header ${code(item)} of ${where}`;
    if (section === 'headers' && inner[0] === 'required')
      return `response header ${code(item)} of ${where} is ${diff.after === true ? 'now required' : 'no longer required'}`;
    if (section === 'headers' && inner[0] === 'schema')
      return describeSchema(diff, inner.slice(1), `response header ${code(item)}`, where);
    if (section === 'content' && item !== undefined && inner.length === 0)
      return `${verb} response media type ${code(item)} of ${where}`;
    if (section === 'content' && inner[0] === 'schema') return describeSchema(diff, inner.slice(1), 'response', where);
  }
  return `${verb} ${rest.join('.')} of ${name}${fromTo(diff)}`;
}

/**
 * A change inside a schema: the field it concerns (`a.b`, `[]` for array items) and what happened to it.
 * `subject` is "request"/"response" for bodies, or a parameter or header label.
 */
function describeSchema(diff: Difference, path: JsonPath, subject: string, where: string): string {
  const field: string[] = [];
  let i = 0;
  // Walk down while the step leads to a nested field; stop at the keyword that changed.
  while (i < path.length) {
    const step = path[i];
    const more = (n: number) => i + n < path.length;
    if (step === 'properties' && more(2)) field.push(String(path[i + 1]));
    else if ((step === 'allOf' || step === 'oneOf' || step === 'anyOf') && more(2)) {
      /* a member of a composition is the same field */
    } else if (step === 'items' && more(1)) {
      field.push('[]');
      i += 1;
      continue;
    } else if (step === 'additionalProperties' && more(1)) {
      field.push('*');
      i += 1;
      continue;
    } else break;
    i += 2;
  }
  const tail = path.slice(i);
  const isBody = subject === 'request' || subject === 'response';
  const at = (names: string[]) => {
    const joined = names.join('.').replace(/\.\[\]/g, '[]');
    if (isBody) return joined ? `${subject} field ${code(joined)}` : `${subject} body`;
    return joined ? `field ${code(joined)} of ${subject}` : subject;
  };
  const verb = VERB[diff.action];
  const [keyword, key] = tail;
  if (keyword === 'properties' && key !== undefined && tail.length === 2)
    return `${verb} ${at([...field, String(key)])} of ${where}`;
  if (keyword === 'required' && tail.length <= 2) {
    const names = (tail.length === 2 ? [diff.before ?? diff.after] : ((diff.after ?? diff.before) as unknown[])) ?? [];
    const now = diff.action === 'add' ? 'now required' : 'no longer required';
    return `${names.map((n) => at([...field, String(n)])).join(', ')} of ${where} ${names.length > 1 ? 'are' : 'is'} ${now}`;
  }
  if (keyword === 'enum') {
    const value = diff.action === 'add' ? diff.after : diff.before;
    return `${verb} enum value ${code(value)} of ${at(field)} of ${where}`;
  }
  if (keyword === 'type') return `changed type of ${at(field)} of ${where}${fromTo(diff)}`;
  if (tail.length === 0) return `${verb} schema of ${at(field)} of ${where}${fromTo(diff)}`;
  return `${verb} ${code(tail.join('.'))} of ${at(field)} of ${where}${fromTo(diff)}`;
}

function fromTo(diff: Difference): string {
  const show = (v: unknown) => code(v);
  if (diff.action === 'replace' && isScalar(diff.before) && isScalar(diff.after))
    return ` from ${show(diff.before)} to ${show(diff.after)}`;
  if (diff.action === 'add' && isScalar(diff.after)) return ` (${show(diff.after)})`;
  if (diff.action === 'remove' && isScalar(diff.before)) return ` (was ${show(diff.before)})`;
  return '';
}

function isScalar(value: unknown): boolean {
  return (
    value === null ||
    ['string', 'number', 'boolean'].includes(typeof value) ||
    (Array.isArray(value) && value.every((v) => typeof v === 'string'))
  );
}

function resolve(spec: any, node: any): any {
  while (node && typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce((at: any, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  }
  return node;
}
