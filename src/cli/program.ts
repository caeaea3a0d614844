import { Command, CommanderError } from "commander";
import type { AnyActor } from "../core/actor.js";
import { openJournal as open } from "../journal/open.js";
import type { Journal } from "../journal/types.js";
import { registerConsoleCommand } from "./console.js";
import { type CliConsumers, registerDeadLetterCommands } from "./dead-letters.js";
import { registerGapCommands } from "./gaps.js";
import { registerJournalCommands } from "./journal-commands.js";
import { registerReconcileCommands } from "./reconcile.js";

export interface OncelyCliOptions {
  /**
   * Your application's integration-event consumers, built over the journal the CLI opened:
   * `dead-letters replay` and the console's replay run a letter through them. The built-in
   * `oncely` command has none, and says so when asked to replay.
   */
  consumers?: CliConsumers | undefined;
  /** Your actor definitions: `stream` shows each event as today's code reads it. */
  actors?: readonly AnyActor[] | undefined;
  /** The command's name in its help (default `oncely`). */
  name?: string | undefined;
  /** Arguments as `process.argv` has them (default `process.argv`). */
  argv?: readonly string[] | undefined;
}

/**
 * The `oncely` operator CLI as a program: every command works on the journal named by `--db`
 * (or DATABASE_URL): unset → the embedded SQLite file ./data/oncely.db, `postgres://…` →
 * PostgreSQL. `close()` closes the journal if a command opened it.
 */
export function createOncelyCli(options: Omit<OncelyCliOptions, "argv"> = {}): {
  program: Command;
  close(): Promise<void>;
} {
  const program = new Command()
    .name(options.name ?? "oncely")
    .description(
      "Operate an oncely journal: effects, reconciliation, dead letters, gaps, inbox and outbox retention, streams, web console.",
    )
    .option("--db <url>", "journal: postgres://…, sqlite:PATH, or unset for ./data/oncely.db", process.env.DATABASE_URL)
    .showHelpAfterError()
    .exitOverride();

  let opened: Promise<Journal> | undefined;
  const openJournal = (): Promise<Journal> => {
    opened ??= open(program.opts<{ db?: string }>().db);
    return opened;
  };

  registerJournalCommands(program, openJournal, options.actors ? { actors: options.actors } : {});
  registerReconcileCommands(program, openJournal);
  registerDeadLetterCommands(program, openJournal, { consumers: options.consumers });
  registerGapCommands(program, openJournal);
  registerConsoleCommand(program, openJournal, { consumers: options.consumers });
  return {
    program,
    close: async () => {
      const journal = await opened?.catch(() => undefined);
      await journal?.close();
    },
  };
}

/**
 * `oncely | head` closes the pipe early: the reader has what it wanted, so stop quietly with
 * exit 0 instead of dying on EPIPE. Failure window: none for the journal: every command writes
 * its output after its own commit, and the process exits without closing a read-only handle.
 */
function exitQuietlyOnClosedStdout(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    process.stderr.write(`oncely: cannot write to stdout: ${error.message}\n`);
    process.exit(1);
  });
}

/**
 * Run the operator CLI: the `oncely` binary, or a CLI of your own that gives it your consumers
 * (so `dead-letters replay` works). Sets `process.exitCode` and returns it.
 *
 * @example
 * // ops.ts, run as `node ops.js dead-letters replay <id> --by alice`
 * await runOncelyCli({ name: "shop-ops", consumers: (journal) => [new Consumer({ name: "order-view", journal, handler })] });
 */
export async function runOncelyCli(options: OncelyCliOptions = {}): Promise<number> {
  exitQuietlyOnClosedStdout();
  const { program, close } = createOncelyCli(options);
  let code = 0;
  try {
    await program.parseAsync([...(options.argv ?? process.argv)]);
  } catch (error) {
    if (error instanceof CommanderError) {
      code = error.exitCode;
    } else {
      process.stderr.write(`${program.name()}: ${error instanceof Error ? error.message : String(error)}\n`);
      code = 1;
    }
  } finally {
    await close();
  }
  process.exitCode = code;
  return code;
}
