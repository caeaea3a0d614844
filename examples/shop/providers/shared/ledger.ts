import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * A provider's ledger: named collections of entries, kept in memory and optionally appended to a
 * JSON-lines file. Each entry is written before the provider answers, so a file outlives a crash of
 * the provider exactly like a real provider's database would, and an audit process (or a restarted
 * provider) reads the same truth.
 *
 * File format: one `{"collection": "...", "entry": {...}}` object per line.
 */
export class JsonlLedger<Shape extends Record<string, object[]>> {
  readonly data: Shape;

  constructor(
    collections: readonly (keyof Shape & string)[],
    private readonly path?: string,
  ) {
    const data: Record<string, object[]> = {};
    for (const name of collections) data[name] = [];
    this.data = data as Shape;
    if (path !== undefined) {
      if (existsSync(path)) {
        for (const { collection, entry } of readLines(path)) {
          const target = data[collection];
          if (target) target.push(entry);
        }
      } else {
        mkdirSync(dirname(path), { recursive: true });
      }
    }
  }

  append<K extends keyof Shape & string>(collection: K, entry: Shape[K][number]): void {
    // File first: if the write throws, memory has not claimed something the file lacks.
    if (this.path !== undefined) appendFileSync(this.path, `${JSON.stringify({ collection, entry })}\n`);
    (this.data[collection] as object[]).push(entry);
  }

  toJSON(): Shape {
    return this.data;
  }
}

function readLines(path: string): { collection: string; entry: object }[] {
  const lines = readFileSync(path, "utf8").split("\n");
  const out: { collection: string; entry: object }[] = [];
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    try {
      const parsed = JSON.parse(line) as { collection?: unknown; entry?: unknown };
      if (typeof parsed.collection === "string" && typeof parsed.entry === "object" && parsed.entry !== null) {
        out.push({ collection: parsed.collection, entry: parsed.entry });
      }
    } catch (error) {
      // Only the last line may be torn (a crash mid-append); anything earlier is corruption.
      if (index < lines.length - 1 && lines.slice(index + 1).some((rest) => rest.trim() !== "")) throw error;
    }
  }
  return out;
}

/** Reads a ledger file written by a provider (for audits in another process). */
export function readLedgerFile(path: string): Record<string, object[]> {
  const result: Record<string, object[]> = {};
  for (const { collection, entry } of readLines(path)) {
    const target = result[collection] ?? [];
    target.push(entry);
    result[collection] = target;
  }
  return result;
}
