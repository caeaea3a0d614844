#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import type { Journal } from "../journal/types.js";
import { registerConsoleCommand } from "./console.js";
import { registerDeadLetterCommands } from "./dead-letters.js";
import { registerJournalCommands } from "./journal-commands.js";
import { openJournal as open } from "./open-journal.js";
import { registerReconcileCommands } from "./reconcile.js";

/**
 * `oncely` operator CLI. Every command works on the journal named by `--db` (or DATABASE_URL):
 * unset → the embedded SQLite file ./data/oncely.db, `postgres://…` → PostgreSQL.
 */
const program = new Command()
  .name("oncely")
  .description(
    "Operate an oncely journal: effects, reconciliation, dead letters, inbox and outbox retention, streams, web console.",
  )
  .option("--db <url>", "journal: postgres://…, sqlite:PATH, or unset for ./data/oncely.db", process.env.DATABASE_URL)
  .showHelpAfterError()
  .exitOverride();

let opened: Journal | undefined;
async function openJournal(): Promise<Journal> {
  if (!opened) opened = await open(program.opts<{ db?: string }>().db);
  return opened;
}

registerJournalCommands(program, openJournal);
registerReconcileCommands(program, openJournal);
registerDeadLetterCommands(program, openJournal);
registerConsoleCommand(program, openJournal);

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
