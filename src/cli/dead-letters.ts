import { userInfo } from "node:os";
import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import { recordAction } from "../console/audit.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { DeadLetterRecord, Journal } from "../journal/types.js";
import type { Consumer } from "../messaging/consumer.js";
import { DeadLetters } from "../messaging/dead-letters.js";
import { type BulkFlags, hasBulkFlags, runBulk } from "./dead-letters-bulk.js";

const statusSchema = z.enum(["open", "replayed", "discarded"]);
const limitSchema = z.coerce.number().int().positive();

/**
 * The application's consumers, built over the journal the CLI opened: replaying a dead letter
 * runs its body through the consumer that dead-lettered it (verification, inbox, ordering, the
 * actors it routes to), and those live in the application's code, not in oncely.
 */
export type CliConsumers = (journal: Journal) => readonly Consumer[] | Promise<readonly Consumer[]>;

/** What `dead-letters replay` (and the console's replay) answers when the CLI was given no consumers. */
export const NO_CONSUMERS_FOR_REPLAY =
  "replaying a dead letter needs the consumers of your application, and this `oncely` command has none. " +
  "Replay from a CLI of your own that passes them: " +
  '`import { runOncelyCli } from "oncely"; await runOncelyCli({ consumers: (journal) => [/* your Consumer objects over journal */] });` ' +
  '(docs/operations/cli.md, "Your own CLI: replaying dead letters"), or call `new DeadLetters(journal, { consumers }).replay(id)` in your application. ' +
  "`oncely dead-letters show <id>` prints the letter; `discard <id>` closes it without handling it.";

export interface DeadLetterCommandsOptions {
  consumers?: CliConsumers | undefined;
  out?: (text: string) => void;
  clock?: Clock;
  ids?: IdGenerator;
}

function line(d: DeadLetterRecord): string {
  const when = new Date(d.lastFailedAt).toISOString();
  const error = d.error.length > 80 ? `${d.error.slice(0, 77)}...` : d.error;
  return `${d.id}  ${d.status.padEnd(9)}  ${d.consumer}  attempts=${d.attempts}  ${when}  ${error}`;
}

/** Who runs the command when `--by` is not given: the login name, so the record never lacks one. */
function loginName(): string {
  try {
    return userInfo().username || "unknown";
  } catch {
    return "unknown";
  }
}

const operatorFlags = z.object({
  by: z.string().trim().min(1, "--by must not be empty").optional(),
  note: z.string().optional(),
});

/**
 * `oncely dead-letters list|show|discard|replay`; discard and replay are recorded in
 * `oncely.operator-actions`, one record per letter, also when they take every open letter a filter
 * matches (`--consumer`, `--error-contains`, `--since`, `--until`; `--dry-run` counts, `--expect`
 * acts on that count).
 */
export function registerDeadLetterCommands(
  program: Command,
  openJournal: () => Promise<Journal>,
  options: DeadLetterCommandsOptions = {},
): void {
  const out = options.out ?? ((text: string) => void process.stdout.write(text));
  const { clock, ids } = resolveEnvironment(options);
  const group = program.command("dead-letters").description("inspect, replay or discard dead-lettered messages");

  const operator = (raw: unknown) => {
    const parsed = operatorFlags.safeParse(raw);
    if (!parsed.success) {
      throw new InvalidInputError(
        "invalid operator",
        parsed.error.issues.map((i) => i.message),
      );
    }
    return { by: parsed.data.by ?? loginName(), note: parsed.data.note?.trim() || null };
  };

  group
    .command("list")
    .description("list dead letters (open ones by default)")
    .option("--consumer <name>", "only this consumer")
    .option("--status <status>", "open | replayed | discarded", "open")
    .option("--limit <n>", "at most this many", "100")
    .option("--json", "print JSON lines")
    .action(async (flags: { consumer?: string; status: string; limit: string; json?: boolean }) => {
      const status = statusSchema.safeParse(flags.status);
      if (!status.success) throw new InvalidInputError(`--status must be open, replayed or discarded`);
      const limit = limitSchema.safeParse(flags.limit);
      if (!limit.success) throw new InvalidInputError(`--limit must be a positive integer`);
      const journal = await openJournal();
      const letters = await journal.listDeadLetters({
        status: status.data,
        limit: limit.data,
        ...(flags.consumer ? { consumer: flags.consumer } : {}),
      });
      for (const d of letters) out(flags.json ? `${JSON.stringify(d)}\n` : `${line(d)}\n`);
      if (!flags.json) out(`${letters.length} dead letter(s)\n`);
    });

  group
    .command("show")
    .description("print one dead letter with its payload, error and stack")
    .argument("<id>")
    .action(async (id: string) => {
      const journal = await openJournal();
      const d = await journal.getDeadLetter(id);
      if (!d) throw new InvalidInputError(`no dead letter "${id}"`);
      out(`${JSON.stringify(d, null, 2)}\n`);
    });

  const bulkOptions = (command: Command) =>
    command
      .option("--consumer <name>", "without an id: every open letter of this consumer")
      .option("--error-contains <text>", "without an id: every open letter whose error contains this text")
      .option("--since <time>", "without an id: last failed at or after (ISO time, UTC, or a duration back: 2h)")
      .option("--until <time>", "without an id: last failed before (ISO time, UTC, or a duration back)")
      .option("--dry-run", "without an id: print how many open letters match, and do nothing")
      .option("--expect <n>", "without an id: the count --dry-run printed (refused if the set changed)");

  bulkOptions(
    group
      .command("discard")
      .description("mark an open dead letter (or every open one a filter matches) discarded; they stay stored")
      .argument("[id]")
      .option("--by <operator>", "who discards it (default: your login name), recorded in oncely.operator-actions")
      .option("--note <text>", "why, kept with the record"),
  ).action(async (id: string | undefined, flags: Record<string, unknown> & BulkFlags) => {
    const who = operator({ by: flags.by, note: flags.note });
    if (id === undefined || hasBulkFlags(flags)) {
      if (id !== undefined) throw new InvalidInputError("give a dead letter's id or a filter, not both");
      const journal = await openJournal();
      const deadLetters = async () => new DeadLetters(journal, { clock });
      await runBulk({ journal, deadLetters, clock, ids, out, who }, "discard", flags);
      return;
    }
    const journal = await openJournal();
    const ok = await journal.resolveDeadLetter(id, "discarded", clock.now());
    if (!ok) throw new InvalidInputError(`no open dead letter "${id}"`);
    await recordAction(journal, clock, ids, {
      ...who,
      action: "discard",
      target: id,
      outcome: "discarded",
      via: "cli",
    });
    out(`discarded ${id}\n`);
  });

  bulkOptions(
    group
      .command("replay")
      .description(
        "handle an open dead letter (or every open one a filter matches) again through its consumer (inbox and ordering apply)",
      )
      .argument("[id]")
      .option("--by <operator>", "who replays it (default: your login name), recorded in oncely.operator-actions")
      .option("--note <text>", "why, kept with the record"),
  ).action(async (id: string | undefined, flags: Record<string, unknown> & BulkFlags) => {
    const who = operator({ by: flags.by, note: flags.note });
    const consumers = options.consumers;
    if (id === undefined || hasBulkFlags(flags)) {
      if (id !== undefined) throw new InvalidInputError("give a dead letter's id or a filter, not both");
      const journal = await openJournal();
      const deadLetters = async () => {
        if (!consumers) throw new InvalidInputError(NO_CONSUMERS_FOR_REPLAY);
        return new DeadLetters(journal, { consumers: [...(await consumers(journal))], clock });
      };
      await runBulk({ journal, deadLetters, clock, ids, out, who }, "replay", flags);
      return;
    }
    if (!consumers) throw new InvalidInputError(NO_CONSUMERS_FOR_REPLAY);
    const journal = await openJournal();
    const deadLetters = new DeadLetters(journal, { consumers: [...(await consumers(journal))], clock });
    const result = await deadLetters.replay(id);
    const outcome = result.released > 0 ? `${result.outcome}, released ${result.released}` : result.outcome;
    await recordAction(journal, clock, ids, { ...who, action: "replay", target: id, outcome, via: "cli" });
    out(`replayed ${id}: ${outcome}\n`);
  });
}
