import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import { parseAddress } from "../core/address.js";
import { type Clock, systemClock } from "../core/clock.js";
import type { Journal } from "../journal/types.js";
import { pruneInbox } from "../messaging/inbox-retention.js";
import { pruneOutbox } from "../messaging/outbox-retention.js";
import { parseDuration } from "./duration.js";

const days = z.coerce.number({ error: "must be a number of days" }).positive("must be more than 0 days");

export interface JournalCommandsOptions {
  out?: (text: string) => void;
  clock?: Clock;
}

/** Journal-level commands: schema, streams, inbox and outbox retention. */
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

  program
    .command("outbox-prune")
    .description(
      "delete done outbox rows older than the retention window (never pending, leased, unknown or dead ones)",
    )
    .option("--older-than <duration>", "retention window, e.g. 7d or 36h; not shorter than the redelivery window", "7d")
    .option(
      "--redelivery-window <duration>",
      "longest time within which a request may be delivered again (as the inbox's retention)",
      "7d",
    )
    .action(async (flags: { olderThan: string; redeliveryWindow: string }) => {
      const retentionMs = parseDuration("--older-than", flags.olderThan);
      const redeliveryWindowMs = parseDuration("--redelivery-window", flags.redeliveryWindow);
      const journal = await openJournal();
      const removed = await pruneOutbox(journal, { now: clock.now(), retentionMs, redeliveryWindowMs });
      out(`removed ${removed} done outbox rows older than ${flags.olderThan}`);
    });
}
