import { createHash } from "node:crypto";
import { InvalidInputError } from "./errors.js";

/**
 * Text every back end stores faithfully: no NUL (U+0000), which PostgreSQL refuses in `text` and
 * `jsonb` (errors 22021, 22P05), and no unpaired UTF-16 surrogate, which has no UTF-8 encoding
 * (drivers silently write U+FFFD instead, so the value read back differs from the one written).
 * Ids, keys and message fields are checked with this at every boundary.
 */
const LONE_SURROGATE = /\p{Cs}/u;
/**
 * NUL or any surrogate code unit, paired or not (no `u` flag: it looks at code units): one cheap
 * scan that clears almost every text (ids and names are ASCII); a hit is examined exactly.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this pattern is for
const MAYBE_UNSTORABLE = /[\u0000\uD800-\uDFFF]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this pattern is for
const UNSTORABLE_CHARS = /[\u0000\p{Cs}]/gu;

/** Why `text` cannot be stored (naming the first offending character and its index), or `undefined` when it can. */
export function unstorableReason(text: string): string | undefined {
  if (!MAYBE_UNSTORABLE.test(text)) return undefined;
  const nul = text.indexOf("\u0000");
  const surrogate = LONE_SURROGATE.exec(text);
  if (nul < 0 && !surrogate) return undefined;
  if (nul >= 0 && (!surrogate || nul < surrogate.index)) return `must not contain NUL (U+0000) (at character ${nul})`;
  const found = surrogate as RegExpExecArray;
  const code = found[0].charCodeAt(0).toString(16).toUpperCase();
  return `must not contain an unpaired UTF-16 surrogate (U+${code}) (at character ${found.index})`;
}

export const isStorableText = (text: string): boolean => unstorableReason(text) === undefined;

/** Throws `InvalidInputError` naming each field whose text cannot be stored. `undefined` fields are skipped. */
export function assertStorableText(what: string, fields: Record<string, string | null | undefined>): void {
  const issues: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    const reason = typeof value === "string" ? unstorableReason(value) : undefined;
    if (reason) issues.push(`${field}: ${reason}`);
  }
  if (issues.length > 0) throw new InvalidInputError(what, issues);
}

/**
 * Paths (from the root, `[]` for the root itself) of the strings and object keys in a JSON-like
 * value that cannot be stored, with the reason. Iterative: a deeply nested payload cannot
 * overflow the stack.
 */
export function unstorableStrings(value: unknown): { path: (string | number)[]; reason: string }[] {
  const found: { path: (string | number)[]; reason: string }[] = [];
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const current = item.value;
    if (typeof current === "string") {
      const reason = unstorableReason(current);
      if (reason) found.push({ path: item.path, reason });
    } else if (Array.isArray(current)) {
      current.forEach((child, index) => {
        pending.push({ value: child, path: [...item.path, index] });
      });
    } else if (current !== null && typeof current === "object") {
      for (const [key, child] of Object.entries(current)) {
        const reason = unstorableReason(key);
        if (reason) found.push({ path: [...item.path, key], reason: `key ${reason}` });
        pending.push({ value: child, path: [...item.path, key] });
      }
    }
  }
  return found;
}

/**
 * A storable, readable rendering of any text: NUL and unpaired surrogates become `\u0000` /
 * `\uD800` escapes. Not reversible on its own (the text `\u0000` renders the same); where the
 * original matters it is kept elsewhere (see `src/journal/storable.ts`).
 */
export function escapeUnstorable(text: string): string {
  if (isStorableText(text)) return text;
  return text.replace(UNSTORABLE_CHARS, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);
}

/**
 * A storable id derived from any text: the text itself when storable, else its escaped rendering
 * plus a digest of the original, so two different unstorable ids never share one derived id.
 */
export function storableId(text: string): string {
  if (isStorableText(text)) return text;
  const digest = createHash("sha256").update(text, "utf16le").digest("hex").slice(0, 16);
  return `${escapeUnstorable(text)}#${digest}`;
}
