import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import { recordAction } from "../console/audit.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type {
  ConsumerStateReader,
  DeadLetterReader,
  DocumentReader,
  EventStore,
  InboxReader,
} from "../journal/types.js";
import { listGaps, type ParkedGap, skipGap, supplyGapEvent } from "../messaging/gap-tools.js";

export interface GapCommandsOptions {
  out?: (text: string) => void;
  /** What `--event -` reads (default: all of stdin). */
  stdin?: () => Promise<string>;
  clock?: Clock;
  ids?: IdGenerator;
}

const operatorFlags = z.object({
  by: z.string({ error: "--by <operator> is required: who takes the action" }).trim().min(1, "--by must not be empty"),
  note: z.string().optional(),
});

function operator(raw: unknown): { by: string; note: string | null } {
  const parsed = operatorFlags.safeParse(raw);
  if (!parsed.success) {
    throw new InvalidInputError(
      "invalid operator",
      parsed.error.issues.map((i) => i.message),
    );
  }
  return { by: parsed.data.by, note: parsed.data.note?.trim() || null };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

function line(g: ParkedGap, now: number): string {
  const missing = g.releasable
    ? "none (next version parked, released at the next gap check)"
    : `${g.firstMissing}..${g.lastMissing}`;
  const alert = g.alert ? `alert=${g.alert.status}` : "not alerted";
  const waiting = Math.max(0, Math.round((now - g.oldestParkedAt) / 1000));
  return `${g.consumer}  ${g.source}  checkpoint=${g.checkpoint}  missing=${missing}  parked=${g.parkedVersions.join(",")}  waiting=${waiting}s  ${alert}`;
}

/** What the gap commands use: the gaps' reads (parked, checkpoints, alerts, dead letters), their commits and the recorded actions. */
export type GapCliJournal = Pick<EventStore, "commit"> &
  InboxReader &
  ConsumerStateReader &
  DocumentReader &
  Pick<DeadLetterReader, "listDeadLetters">;

/**
 * `oncely gaps list|skip|supply`: the gaps of sequenced consumers, acted on through the journal
 * (see `messaging/gap-tools.ts`); the running consumer's next gap check releases what follows.
 * Skip and supply are recorded in `oncely.operator-actions` with the operator's name and note.
 */
export function registerGapCommands(
  program: Command,
  openJournal: () => Promise<GapCliJournal>,
  options: GapCommandsOptions = {},
): void {
  const out = options.out ?? ((text: string) => void process.stdout.write(text));
  const stdin = options.stdin ?? readStdin;
  const { clock, ids } = resolveEnvironment(options);
  const group = program
    .command("gaps")
    .description("list, skip or supply the gaps of sequenced consumers (messages parked behind a missing version)");

  group
    .command("list")
    .description(
      "sources with messages parked past the checkpoint; without --consumer, the consumers named by gap alerts and dead letters",
    )
    .option("--consumer <name>", "only this consumer (also finds gaps not yet alerted on)")
    .option("--json", "print JSON lines")
    .action(async (flags: { consumer?: string; json?: boolean }) => {
      const journal = await openJournal();
      const gaps = await listGaps(journal, { consumer: flags.consumer });
      const now = clock.now();
      for (const g of gaps) out(flags.json ? `${JSON.stringify(g)}\n` : `${line(g, now)}\n`);
      if (!flags.json) out(`${gaps.length} source(s) with parked messages\n`);
    });

  group
    .command("skip")
    .description(
      "give up the missing versions as lost: the checkpoint moves to just below the first parked version; the consumer releases the rest",
    )
    .argument("<consumer>")
    .argument("<source>", "the producer stream, source/aggregateId")
    .option("--by <operator>", "who skips it (required), recorded on the alert and in oncely.operator-actions")
    .option("--note <text>", "why, kept with the record")
    .action(async (consumer: string, source: string, flags: Record<string, unknown>) => {
      const who = operator(flags);
      const journal = await openJournal();
      const skipped = await skipGap(journal, { consumer, source, ...who, clock });
      const outcome = `skipped ${skipped.from}..${skipped.to}`;
      await recordAction(journal, clock, ids, {
        ...who,
        action: "skip-gap",
        target: `${consumer}|${source}`,
        outcome,
        via: "cli",
      });
      out(
        `${outcome} of ${source} for ${consumer}; parked ${skipped.parkedVersions.join(", ")} are applied at the consumer's next gap check\n`,
      );
    });

  group
    .command("supply")
    .description(
      "supply a missing event (its JSON envelope): parked at its version, applied by the consumer's next gap check through the normal path",
    )
    .argument("<consumer>")
    .requiredOption("--event <file>", "the envelope as JSON, from a file or - for stdin")
    .option("--by <operator>", "who supplies it (required), recorded in oncely.operator-actions")
    .option("--note <text>", "why, kept with the record")
    .action(async (consumer: string, flags: Record<string, unknown> & { event: string }) => {
      const who = operator(flags);
      const text = flags.event === "-" ? await stdin() : await readEvent(flags.event);
      let envelope: unknown;
      try {
        envelope = JSON.parse(text);
      } catch (error) {
        const from = flags.event === "-" ? "stdin" : flags.event;
        throw new InvalidInputError(`--event: ${from} is not JSON (${error instanceof Error ? error.message : error})`);
      }
      const journal = await openJournal();
      const supplied = await supplyGapEvent(journal, { consumer, envelope, ...who, clock });
      await recordAction(journal, clock, ids, {
        ...who,
        action: "supply-gap",
        target: `${consumer}|${supplied.source}@${supplied.version}`,
        outcome: `parked ${supplied.eventId}`,
        via: "cli",
      });
      const when =
        supplied.version === supplied.gap.from
          ? "the consumer applies it at its next gap check"
          : `the consumer applies it once versions ${supplied.gap.from}..${supplied.version - 1} are supplied or skipped`;
      out(
        `supplied ${supplied.eventId} as version ${supplied.version} of ${supplied.source} for ${consumer} ` +
          `(gap ${supplied.gap.from}..${supplied.gap.to}); ${when}\n`,
      );
    });
}

async function readEvent(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new InvalidInputError(`--event: cannot read ${path} (${error instanceof Error ? error.message : error})`);
  }
}
