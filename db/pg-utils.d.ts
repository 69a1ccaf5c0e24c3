// pg's own helpers, which its package exports as ./lib/* but @types/pg does not describe.
declare module 'pg/lib/utils.js' {
  /** A value as pg binds it: its text form (a Date as its timestamp, an array as an array literal, an object as JSON). */
  export function prepareValue(value: unknown): unknown;
}
