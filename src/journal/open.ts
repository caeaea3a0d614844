import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { InvalidInputError } from "../base/errors.js";
import { requireSliceCount } from "../core/slices.js";
import { MemoryJournal } from "./memory.js";
import type { Journal } from "./types.js";

const ACCEPTED =
  "accepted: nothing (SQLite file ./data/oncely.db), postgres://… or postgresql://… (optional ?schema=name and ?slices=N), memory:, sqlite:PATH, file:PATH";

/** `?slices=N`: the journal's slice count (a power of two; every process on one schema must use the same). */
function sliceCountParam(text: string, url: string): number {
  const count = Number(text);
  try {
    return requireSliceCount(count);
  } catch (error) {
    throw new InvalidInputError(`journal URL "${redact(url)}": slices=${text}: ${(error as Error).message}`, [
      ACCEPTED,
    ]);
  }
}

/**
 * Open and migrate the journal a URL names, for the CLI, the shop and applications configured by URL. The
 * one file of the core that reaches a back end, and only by a dynamic import of the one the URL names.
 *
 * @example
 * await openJournal(undefined);                                  // ./data/oncely.db
 * await openJournal("postgres://app@db:5432/shop?schema=oncely"); // tables in schema "oncely"
 * await openJournal("postgres://app@db:5432/shop?slices=16");     // 16 slices (default 64)
 * await openJournal("sqlite:/var/lib/shop/journal.db");
 */
export async function openJournal(url: string | undefined, options: { dataDir?: string } = {}): Promise<Journal> {
  const journal = await selectJournal(url, options);
  try {
    await journal.migrate();
  } catch (error) {
    await journal.close().catch(() => {});
    throw error;
  }
  return journal;
}

// The back ends are imported only when a URL names them: each needs its own driver (an optional
// peer dependency), and `oncely --help` or a SQLite-only application must not need the others.
async function selectJournal(url: string | undefined, options: { dataDir?: string }): Promise<Journal> {
  if (url === undefined || url === "") return sqliteAt(join(options.dataDir ?? "./data", "oncely.db"));
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidInputError(`journal URL "${redact(url)}" is not a valid URL`, [ACCEPTED]);
    }
    const schema = parsed.searchParams.get("schema") ?? undefined;
    const slices = parsed.searchParams.get("slices") ?? undefined;
    parsed.searchParams.delete("schema");
    parsed.searchParams.delete("slices");
    const sliceCount = slices === undefined ? undefined : sliceCountParam(slices, url);
    const { postgresJournal } = await import("../postgres/index.js");
    return postgresJournal({
      connectionString: parsed.toString(),
      ...(schema ? { schema } : {}),
      ...(sliceCount === undefined ? {} : { sliceCount }),
    });
  }
  if (url === "memory:") return new MemoryJournal();
  for (const prefix of ["sqlite:", "file:"]) {
    if (url.startsWith(prefix) && url.length > prefix.length) {
      // Accept sqlite:///abs/path and sqlite://rel/path as well as sqlite:PATH.
      const path = url
        .slice(prefix.length)
        .replace(/^\/\/(?=\/)/, "")
        .replace(/^\/\/(?!\/)/, "");
      return sqliteAt(path);
    }
  }
  throw new InvalidInputError(`unsupported journal URL "${redact(url)}"`, [ACCEPTED]);
}

async function sqliteAt(path: string): Promise<Journal> {
  const { sqliteJournal } = await import("../sqlite/index.js");
  mkdirSync(dirname(path), { recursive: true });
  return sqliteJournal({ path });
}

/** Never echo a password back into logs or error messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, "//$1:***@");
}
