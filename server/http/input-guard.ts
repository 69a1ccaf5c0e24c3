// The one check every request input passes besides the spec: text that cannot be stored as it was sent. PostgreSQL
// refuses U+0000 in text (a 500 from any field that reaches it), and a lone UTF-16 surrogate, which JSON and
// percent-decoding can produce, would be stored as U+FFFD without a word. JSON Schema can say neither for every string
// at once, so the API pipeline (server/contract/surface.ts) and the OAuth forms (server/oauth/router.ts) call this.
import type { FieldError } from '../../domain/errors.ts';

/**
 * The first string of `input` (keys included) that is not storable text, as a field error under `prefix`
 * (`body.title`); undefined when every string is fine. Walks without recursion: a parsed body may nest deeply.
 */
export function unstorableText(input: unknown, prefix: string): FieldError | undefined {
  const pending: Array<[unknown, string]> = [[input, prefix]];
  while (pending.length > 0) {
    const [value, path] = pending.pop()!;
    const problem = typeof value === 'string' ? whatIsWrong(value) : undefined;
    if (problem) return { path, message: problem };
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      const keyProblem = whatIsWrong(key);
      // The path then holds the bad key itself: escaped, so that the answer can show it.
      if (keyProblem) return { path: JSON.stringify(at).slice(1, -1), message: `is a key that ${keyProblem}` };
      pending.push([child, at]);
    }
  }
  return undefined;
}

/** Under the `u` flag a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Cs}/u;

function whatIsWrong(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode: it has a lone surrogate (U+D800 to U+DFFF)';
  return undefined;
}
