import type { Envelope } from "./envelope.js";

/**
 * Subject naming: `<prefix>.<source>.<type>`, e.g. `shop.payment.PaymentProcessed`.
 * Tokens are sanitised because `.`, `*`, `>` and spaces have meaning in NATS subjects.
 */
export const subjectToken = (value: string): string => value.replace(/[.*>\s]/g, "_");

export function subjectFor(prefix: string, envelope: Pick<Envelope, "source" | "type">): string {
  return `${prefix}.${subjectToken(envelope.source)}.${subjectToken(envelope.type)}`;
}

/** NATS-style match: `*` is one token, a trailing `>` is one or more tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    const token = p[i];
    if (token === ">") return i === p.length - 1 && s.length > i;
    if (i >= s.length) return false;
    if (token !== "*" && token !== s[i]) return false;
  }
  return p.length === s.length;
}

/** The `<source>` token of a subject `<prefix>.<source>.<type>`, or undefined when it is not under the prefix. */
export function sourceOfSubject(prefix: string, subject: string): string | undefined {
  const head = `${prefix}.`;
  if (!subject.startsWith(head)) return undefined;
  const [source, type, ...rest] = subject.slice(head.length).split(".");
  return source && type && rest.length === 0 ? source : undefined;
}
