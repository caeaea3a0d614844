/**
 * Server-side HTML with every interpolated value escaped. Effect inputs, dead-letter payloads and
 * error messages are hostile input (a producer or a provider wrote them), so nothing reaches the
 * page unescaped unless it is itself an `Html` built by this tag.
 */

/** HTML that is safe to insert as it is (built by `html`, never from a string given by anyone). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escape text for an element's content or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  if (part === null || part === undefined || part === false) return "";
  return escapeHtml(String(part));
}

/** Tagged template: `html\`<td>${value}</td>\`` escapes `value`; nested `html` fragments and arrays of them pass. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as Part) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Pretty JSON for a `<pre>`, escaped by `html` where it is interpolated. Values JSON cannot hold show as null. */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? "null";
  } catch {
    return String(value);
  }
}

/** A duration for people: 950 ms, 12 s, 3 min, 5 h, 2 d. */
export function age(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}

export const isoTime = (ms: number | null): string => (ms === null ? "" : new Date(ms).toISOString());

/** A query string from defined values only, for links between pages. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== "") search.set(name, String(value));
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}
