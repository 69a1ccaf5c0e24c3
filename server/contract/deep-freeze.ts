// Freezing a value and everything it reaches, for data several owners read and none may change (a parsed spec shared by
// every app of a process): a write into it throws in strict-mode code instead of changing what the others read.

/** Freezes `value` and all it reaches, each object once (a dereferenced spec has cycles); returns `value`. */
export function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null || seen.has(next)) continue;
    seen.add(next);
    Object.freeze(next);
    pending.push(...Object.values(next));
  }
  return value;
}
