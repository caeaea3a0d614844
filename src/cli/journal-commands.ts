import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import type { AnyActor } from "../core/actor.js";
import { parseAddress } from "../core/address.js";
import type { Clock } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import { readEvent } from "../core/recovery.js";
import type { EventReader, EventRecord, InboxStore, JournalAdmin, OutboxStore } from "../journal/types.js";
import { pruneInbox } from "../retention/inbox.js";
import { pruneOutbox } from "../retention/outbox.js";
import { parseDuration } from "./duration.js";

const days = z.coerce.number({ error: "must be a number of days" }).positive("must be more than 0 days");

export interface JournalCommandsOptions {
  out?: (text: string) => void;
  clock?: Clock;
  /** Actor definitions: `stream` shows each event as today's code reads it (through its upcasters). */
  actors?: readonly AnyActor[];
}

/**
 * What the journal-level commands use: the back end's name (the journal is migrated when opened),
 * a stream's events, and inbox and outbox retention.
 */
export type JournalCliJournal = Pick<JournalAdmin, "backend"> &
  Pick<EventReader, "readStream"> &
  Pick<InboxStore, "pruneInbox"> &
  Pick<OutboxStore, "pruneOutbox">;

/** Journal-level commands: schema, streams, inbox and outbox retention. */
export function registerJournalCommands(
  program: Command,
  openJournal: () => Promise<JournalCliJournal>,
  options: JournalCommandsOptions = {},
): void {
  const out = options.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const { clock } = resolveEnvironment(options);

  program
    .command("migrate")
    .description("create or upgrade the journal schema (idempotent)")
    .action(async () => {
      const journal = await openJournal();
      out(`journal (${journal.backend}) is at the latest schema`);
    });

  program
    .command("stream")
    .description("print the events of one actor, e.g. `oncely stream order/42`, upcast to the current versions")
    .argument("<address>", "actor address type/id")
    .option("--json", "print JSON lines")
    .option("--actors <module>", "a module whose exports include the actor definitions (to upcast with)")
    .option("--stored", "print events as stored, without upcasting")
    .action(async (address: string, flags: { json?: boolean; actors?: string; stored?: boolean }) => {
      const { type } = parseAddress(address);
      const actors = flags.actors ? await actorsFrom(flags.actors) : (options.actors ?? []);
      const definition = flags.stored ? undefined : actors.find((a) => a.type === type);
      const journal = await openJournal();
      const events = await journal.readStream(address);
      if (events.length === 0) throw new InvalidInputError(`stream "${address}" has no events`);
      for (const stored of events) {
        const e = definition ? asReadToday(definition, stored) : stored;
        out(
          flags.json
            ? JSON.stringify(e)
            : `${String(e.version).padStart(5)}  ${new Date(e.recordedAt).toISOString()}  ${e.type} v${e.schemaVersion}  ${JSON.stringify(e.data)}`,
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

/**
 * The event as `definition` reads it: upcast data, the current version, and `storedVersion` when
 * it differs. An event it cannot read is shown as stored, with the reason (the listing goes on).
 */
function asReadToday(
  definition: AnyActor,
  e: EventRecord,
): EventRecord & { storedVersion?: number; unreadable?: string } {
  try {
    const data = readEvent(definition, e);
    const schemaVersion = definition.events?.[e.type]?.version ?? 1;
    return schemaVersion === e.schemaVersion ? e : { ...e, data, schemaVersion, storedVersion: e.schemaVersion };
  } catch (error) {
    return { ...e, unreadable: error instanceof Error ? error.message : String(error) };
  }
}

/** Actor definitions among a module's exports (an `actors` array, or definitions exported one by one). */
async function actorsFrom(module: string): Promise<AnyActor[]> {
  const exports = (await import(pathToFileURL(resolve(module)).href)) as Record<string, unknown>;
  const isActor = (v: unknown): v is AnyActor =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as AnyActor).type === "string" &&
    typeof (v as AnyActor).evolve === "function";
  const values = Object.values(exports).flatMap((v) => (Array.isArray(v) ? v : [v]));
  const actors = values.filter(isActor);
  if (actors.length === 0) throw new InvalidInputError(`--actors ${module}: the module exports no actor definitions`);
  return actors;
}
