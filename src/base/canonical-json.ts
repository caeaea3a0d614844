import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level, so equal requests hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  // Keys are written out rather than copied into a fresh object: a key such as "__proto__" (which
  // JSON.parse makes an own property) would otherwise set a prototype and vanish from the output,
  // and whatever the canonical form is signed or hashed for would not cover it.
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(",")}}`;
}

/** sha256 (hex) of the canonical JSON of a request. */
export function requestHash(request: unknown): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}
