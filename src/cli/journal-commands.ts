import type { Command } from "commander";
import { z } from "zod";
import { parseAddress } from "../core/address.js";
import { type Clock, systemClock } from "../core/clock.js";
import { InvalidInputError } from "../core/errors.js";
import type { Journal } from "../journal/types.js";
import { pruneInbox } from "../messaging/inbox-retention.js";

const days = z.coerce.number({ error: "must be a number of days" }).positive("must be more than 0 days");

export interface JournalCommandsOptions {
  out?: (text: string) => void;
  clock?: Clock;
}

/** Journal-level commands: schema, streams, inbox retention. */
export function registerJournalCommands(
  program: Command,
  openJournal: () => Promise<Journal>,
  options: JournalCommandsOptions = {},
): void {
  const out = options.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const clock = options.clock ?? systemClock;

  program
    .command("migrate")
    .description("create or upgrade the journal schema (idempotent)")
    .action(async () => {
      const journal = await openJournal();
      out(`journal (${journal.backend}) is at the latest schema`);
    });

  program
    .command("stream")
    .description("print the events of one actor, e.g. `oncely stream order/42`")
    .argument("<address>", "actor address type/id")
    .option("--json", "print JSON lines")
    .action(async (address: string, flags: { json?: boolean }) => {
      parseAddress(address);
      const journal = await openJournal();
      const events = await journal.readStream(address);
      if (events.length === 0) throw new InvalidInputError(`stream "${address}" has no events`);
      for (const e of events) {
        out(
          flags.json
            ? JSON.stringify(e)
            : `${String(e.version).padStart(5)}  ${new Date(e.recordedAt).toISOString()}  ${e.type}  ${JSON.stringify(e.data)}`,
        );
      }
    });

  program
    .command("inbox-prune")
    .description("delete inbox (dedup) records older than the retention window")
    .option("--older-than-days <days>", "retention window in days; must cover the longest redelivery period", "7")
    .action(async (flags: { olderThanDays: string }) => {
      const parsed = days.safeParse(flags.olderThanDays);
      if (!parsed.success) {
        throw new InvalidInputError(`--older-than-days "${flags.olderThanDays}" ${parsed.error.issues[0]?.message}`);
      }
      const journal = await openJournal();
      const removed = await pruneInbox(journal, { now: clock.now(), retentionMs: parsed.data * 86_400_000 });
      out(`removed ${removed} inbox records older than ${parsed.data} days`);
    });
}
