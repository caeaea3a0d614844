#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import type { Journal } from "../journal/types.js";
import { registerJournalCommands } from "./journal-commands.js";

/**
 * `oncely` operator CLI. Every command works on the journal named by `--db` (or DATABASE_URL):
 * unset → the embedded SQLite file ./data/oncely.db, `postgres://…` → PostgreSQL.
 */
const program = new Command()
  .name("oncely")
  .description("Operate an oncely journal: effects, reconciliation, dead letters, inbox retention, streams.")
  .option("--db <url>", "journal: postgres://…, sqlite:PATH, or unset for ./data/oncely.db", process.env.DATABASE_URL)
  .showHelpAfterError()
  .exitOverride();

let opened: Journal | undefined;
async function openJournal(): Promise<Journal> {
  if (!opened) {
    const { openJournal: open } = await import("./open-journal.js");
    opened = await open(program.opts<{ db?: string }>().db);
  }
  return opened;
}

registerJournalCommands(program, openJournal);
for (const module of ["./reconcile.js", "./dead-letters.js"]) {
  // Each command group lives in its own file; a group that is not built yet is simply absent.
  const loaded = (await import(module).catch(() => undefined)) as
    | Record<string, (p: Command, open: () => Promise<Journal>) => void>
    | undefined;
  for (const [name, register] of Object.entries(loaded ?? {})) {
    if (name.startsWith("register") && typeof register === "function") register(program, openJournal);
  }
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`oncely: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} finally {
  await opened?.close();
}
