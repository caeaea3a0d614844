import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import type { DeadLetterRecord, Journal } from "../journal/types.js";

const statusSchema = z.enum(["open", "replayed", "discarded"]);
const limitSchema = z.coerce.number().int().positive();

/**
 * Replays one dead letter through its consumer (see `DeadLetters.replay` in src/messaging). The
 * CLI has no consumers of its own: an application that has them passes this in.
 */
export type ReplayDeadLetter = (id: string) => Promise<{ outcome: string; released: number }>;

function line(d: DeadLetterRecord): string {
  const when = new Date(d.lastFailedAt).toISOString();
  const error = d.error.length > 80 ? `${d.error.slice(0, 77)}...` : d.error;
  return `${d.id}  ${d.status.padEnd(9)}  ${d.consumer}  attempts=${d.attempts}  ${when}  ${error}`;
}

/** `oncely dead-letters list|show|discard|replay`. */
export function registerDeadLetterCommands(
  program: Command,
  openJournal: () => Promise<Journal>,
  replay?: ReplayDeadLetter,
): void {
  const group = program.command("dead-letters").description("inspect, replay or discard dead-lettered messages");

  group
    .command("list")
    .description("list dead letters (open ones by default)")
    .option("--consumer <name>", "only this consumer")
    .option("--status <status>", "open | replayed | discarded", "open")
    .option("--limit <n>", "at most this many", "100")
    .option("--json", "print JSON lines")
    .action(async (options: { consumer?: string; status: string; limit: string; json?: boolean }) => {
      const status = statusSchema.safeParse(options.status);
      if (!status.success) throw new InvalidInputError(`--status must be open, replayed or discarded`);
      const limit = limitSchema.safeParse(options.limit);
      if (!limit.success) throw new InvalidInputError(`--limit must be a positive integer`);
      const journal = await openJournal();
      const letters = await journal.listDeadLetters({
        status: status.data,
        limit: limit.data,
        ...(options.consumer ? { consumer: options.consumer } : {}),
      });
      for (const d of letters) process.stdout.write(options.json ? `${JSON.stringify(d)}\n` : `${line(d)}\n`);
      if (!options.json) process.stdout.write(`${letters.length} dead letter(s)\n`);
    });

  group
    .command("show")
    .description("print one dead letter with its payload, error and stack")
    .argument("<id>")
    .action(async (id: string) => {
      const journal = await openJournal();
      const d = await journal.getDeadLetter(id);
      if (!d) throw new InvalidInputError(`no dead letter "${id}"`);
      process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
    });

  group
    .command("discard")
    .description("mark an open dead letter discarded (it stays stored, for audit)")
    .argument("<id>")
    .action(async (id: string) => {
      const journal = await openJournal();
      const ok = await journal.resolveDeadLetter(id, "discarded", Date.now());
      if (!ok) throw new InvalidInputError(`no open dead letter "${id}"`);
      process.stdout.write(`discarded ${id}\n`);
    });

  group
    .command("replay")
    .description("handle an open dead letter again through its consumer (inbox and ordering apply)")
    .argument("<id>")
    .action(async (id: string) => {
      if (!replay) {
        throw new InvalidInputError(
          "replay needs the consumers of the application: run it from the application (DeadLetters.replay) " +
            "or a CLI built with registerDeadLetterCommands(program, openJournal, replay)",
        );
      }
      const result = await replay(id);
      process.stdout.write(
        `replayed ${id}: ${result.outcome}${result.released ? `, released ${result.released}` : ""}\n`,
      );
    });
}
