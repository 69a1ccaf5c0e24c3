// Environment variables declared as data: each says what it accepts, its default and what it is for, and parses its
// raw value by that declaration. app/config-variables.ts declares the service's; loadConfig (app/config.ts), config
// check (app/cli/config.ts) and the generated configuration guide and .env.example (npm run generate) all read it.
import { ConfigError } from '../server/process/config-error.ts';

export type Env = NodeJS.ProcessEnv;

export interface Variable<T> {
  /** The section of the configuration guide it is listed under. */
  group: string;
  /** What it is for, one or two sentences (the guide and .env.example show it). */
  description: string;
  /** What it accepts, in words (the guide shows it). */
  accepts: string;
  /** Its value when unset or empty, in Markdown: the value as code, or words. */
  defaultText: string;
  /** The line's value in .env.example: the default when it is a plain value, else empty. */
  example: string;
  /** A secret: config check masks it. */
  secret: boolean;
  /** The value from the raw environment; throws a ConfigError naming the variable when it is invalid. */
  parse(name: string, raw: string | undefined, env: Env): T;
  /** How config check shows the parsed value. */
  show(value: T, env: Env): string;
}

interface Described {
  group: string;
  description: string;
  secret?: boolean;
}

/** A default: a plain value, or computed from the other variables (then `defaultText` says how). */
type Default<T> = { default: T; defaultText?: string } | { default: (env: Env) => T; defaultText: string };
/** No default: unset means something else, which `whenUnset` says (and `defaultText`, in Markdown, if it differs). */
type NoDefault = { whenUnset: string; defaultText?: string };

/** An unset variable: absent, or empty (as `NAME=` in an env file or a systemd EnvironmentFile leaves it). */
const isUnset = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

type IntegerSpec = Described & { min: number; max: number; unit?: string };

/** An integer within bounds. */
export function integer(spec: IntegerSpec & Default<number>): Variable<number>;
export function integer(spec: IntegerSpec & NoDefault): Variable<number | undefined>;
export function integer(spec: IntegerSpec & (Default<number> | NoDefault)): Variable<number | undefined> {
  const { min, max, unit } = spec;
  return value({
    ...spec,
    accepts: `an integer from ${min} to ${max}${unit ? `, in ${unit}` : ''}`,
    parse: (name, raw) => {
      const number = Number(raw);
      if (!Number.isInteger(number) || number < min || number > max)
        throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return number;
    },
  });
}

/** On when `1`, off when unset or `0`; anything else is refused rather than read as off. */
export function flag(spec: Described & { on: string }): Variable<boolean> {
  return value({
    ...spec,
    accepts: '`1` (on) or `0` (off)',
    default: false,
    defaultText: 'off',
    example: '',
    parse: (name, raw) => {
      if (raw === '0') return false;
      if (raw === '1') return true;
      throw new ConfigError(`${name} must be 1 (on) or 0 (off), got "${raw}"`);
    },
    show: (on) => (on ? `1 (${spec.on})` : 'off'),
  });
}

/** One of a list of words. */
export function oneOf<const T extends string>(spec: Described & { values: readonly T[]; default: T }): Variable<T> {
  return value({
    ...spec,
    accepts: spec.values.map((v) => `\`${v}\``).join(', '),
    parse: (name, raw) => {
      if (!(spec.values as readonly string[]).includes(raw))
        throw new ConfigError(`${name} must be one of ${spec.values.join(', ')}, got "${raw}"`);
      return raw as T;
    },
  });
}

type ValueSpec<T> = Described & {
  accepts: string;
  /** Parses a set value; throws a ConfigError naming the variable when it is invalid. */
  parse: (name: string, raw: string) => T;
  show?: (value: T, env: Env) => string;
  /** The line's value in .env.example when it is not the default as written by String(). */
  example?: string;
};

/** Any other variable, its value parsed by `parse` when set. */
export function value<T>(spec: ValueSpec<T> & Default<T>): Variable<T>;
export function value<T>(spec: ValueSpec<T> & NoDefault): Variable<T | undefined>;
export function value<T>(spec: ValueSpec<T> & (Default<T> | NoDefault)): Variable<T | undefined>;
export function value<T>(spec: ValueSpec<T> & (Default<T> | NoDefault)): Variable<T | undefined> {
  const show = spec.show ?? String;
  const plainDefault = 'default' in spec && typeof spec.default !== 'function' ? String(spec.default) : undefined;
  const whenUnset = 'whenUnset' in spec ? spec.whenUnset : undefined;
  return {
    group: spec.group,
    description: spec.description,
    secret: spec.secret ?? false,
    accepts: spec.accepts,
    defaultText:
      ('defaultText' in spec && spec.defaultText) || whenUnset || (plainDefault ? `\`${plainDefault}\`` : ''),
    example: spec.example ?? plainDefault ?? '',
    parse(name, raw, env) {
      if (!isUnset(raw)) return spec.parse(name, raw);
      if (!('default' in spec)) return undefined;
      return typeof spec.default === 'function' ? (spec.default as (env: Env) => T)(env) : spec.default;
    },
    show: (parsed, env) => {
      if (parsed === undefined) return `(not set: ${whenUnset})`;
      return spec.secret ? '(set, masked)' : show(parsed as T, env);
    },
  };
}

/** The parsed value of each declared variable, by its name. */
export type Values<V extends Record<string, Variable<any>>> = { [K in keyof V]: ReturnType<V[K]['parse']> };

/** Every declared variable parsed from `env`, in the order declared; the first invalid one throws. */
export function readVariables<V extends Record<string, Variable<any>>>(variables: V, env: Env): Values<V> {
  return Object.fromEntries(
    Object.entries(variables).map(([name, variable]) => [name, variable.parse(name, env[name], env)]),
  ) as Values<V>;
}
