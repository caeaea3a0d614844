import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import { recordAction } from "../console/audit.js";
import { settleAndRecord } from "../console/settlements.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import { Reconciliation, type ReconciliationJournal } from "../effects/reconciliation.js";
import type { EffectStatus, EffectView, Settlement } from "../effects/types.js";
import { listEffects } from "../effects/view.js";
import type { DocumentReader, EventStore } from "../journal/types.js";
import { registerReviveCommand } from "./revive.js";

/** Where the commands print; tests pass their own. */
export interface CliOutput {
  out(text: string): void;
}
const stdout: CliOutput = { out: (text) => void process.stdout.write(text) };

const STATUSES = ["NotRequested", "Pending", "Completed", "Failed", "Unknown"] as const;

const settleOptions = z
  .object({
    succeeded: z.boolean().optional(),
    failed: z.boolean().optional(),
    result: z.string().optional(),
    reason: z.string().optional(),
    by: z.string({ error: "--by <operator> is required: who settles it" }).trim().min(1, "--by must not be empty"),
    note: z.string().optional(),
  })
  .superRefine((o, ctx) => {
    if (Boolean(o.succeeded) === Boolean(o.failed)) {
      ctx.addIssue({ code: "custom", message: "give exactly one of --succeeded or --failed" });
    }
    if (o.succeeded && o.result === undefined) {
      ctx.addIssue({
        code: "custom",
        message: '--succeeded needs --result <json> (the provider\'s result, e.g. \'{"id":"pay_1"}\')',
      });
    }
    if (o.succeeded && o.reason !== undefined)
      ctx.addIssue({ code: "custom", message: "--reason goes with --failed, not --succeeded" });
    if (o.failed && (o.reason === undefined || o.reason.trim() === "")) {
      ctx.addIssue({ code: "custom", message: "--failed needs --reason <text>" });
    }
    if (o.failed && o.result !== undefined)
      ctx.addIssue({ code: "custom", message: "--result goes with --succeeded, not --failed" });
  });

const statusOption = z.enum(STATUSES, { error: `--status must be one of ${STATUSES.join(", ")}` });

function fail(what: string, error: z.ZodError): never {
  throw new InvalidInputError(
    what,
    error.issues.map((i) => i.message),
  );
}

function parseResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      `--result is not valid JSON (${error instanceof Error ? error.message : String(error)}): ${text}`,
    );
  }
}

const row = (v: EffectView) =>
  [
    v.status.padEnd(9),
    v.key,
    v.kind,
    v.owner,
    `attempts=${v.attempts}`,
    v.lastError ? `last error: ${v.lastError}` : "",
  ]
    .filter(Boolean)
    .join("  ");

/** What the reconcile and effects commands use: the queue's reads and settlements, and the recorded actions. */
export type ReconcileCliJournal = ReconciliationJournal &
  Pick<EventStore, "commit"> &
  Pick<DocumentReader, "listDocuments">;

/**
 * `reconcile list|settle` and `effects list|revive`: the operator's side of the effect protocol.
 * Needs only the journal: a settlement is written on the outbox row, and the application's
 * dispatcher records it in the owning actor as an event (`via: "operator"`). Settlements and
 * revivals are recorded in `oncely.operator-actions`, where the console's Operator actions
 * page shows them with the console's own.
 */
export function registerReconcileCommands(
  program: Command,
  openJournal: () => Promise<ReconcileCliJournal>,
  output: CliOutput = stdout,
  env: { clock?: Clock; ids?: IdGenerator } = {},
): void {
  const { clock, ids } = resolveEnvironment(env);
  const reconcile = program
    .command("reconcile")
    .description("effects waiting for an operator (outcome Unknown, or retries exhausted): list, settle, retry");

  reconcile
    .command("list")
    .description("list effects waiting for an operator")
    .option("--kind <kind>", "only this effect kind")
    .option("--json", "print JSON lines")
    .action(async (options: { kind?: string; json?: boolean }) => {
      const queue = new Reconciliation({ journal: await openJournal() });
      const items = await queue.list(options.kind ? { kind: options.kind } : {});
      if (options.json) {
        for (const item of items) output.out(`${JSON.stringify(item)}\n`);
        return;
      }
      if (items.length === 0) {
        output.out("reconciliation queue is empty\n");
        return;
      }
      for (const item of items) {
        const cause = item.neverPerformed ? `${item.cause} (never performed)` : item.cause;
        output.out(`${row(item)}  cause=${cause}  input=${JSON.stringify(item.input)}\n`);
      }
      output.out(`${items.length} effect(s) need reconciliation\n`);
    });

  reconcile
    .command("settle")
    .description("record what really happened to an Unknown effect (the owner records it as an event)")
    .argument("<key>", "the effect's idempotency key, e.g. order:42:payment")
    .option("--succeeded", "the provider did act")
    .option("--failed", "the provider did not act")
    .option("--result <json>", "with --succeeded: the provider's result as JSON")
    .option("--reason <text>", "with --failed: why it failed")
    .option("--by <operator>", "who settles it (recorded in the event and in oncely.operator-actions)")
    .option("--note <text>", "free text kept with the settlement")
    .action(async (key: string, raw: Record<string, unknown>) => {
      const parsed = settleOptions.safeParse(raw);
      if (!parsed.success) fail(`cannot settle "${key}"`, parsed.error);
      const o = parsed.data;
      const note = o.note === undefined ? {} : { note: o.note };
      const settlement: Settlement = o.succeeded
        ? { outcome: "succeeded", result: parseResult(o.result as string), by: o.by, ...note }
        : { outcome: "failed", reason: (o.reason as string).trim(), by: o.by, ...note };
      const journal = await openJournal();
      const reconciliation = new Reconciliation({ journal, clock });
      await settleAndRecord({ journal, reconciliation, clock, ids, via: "cli" }, key, settlement);
      output.out(
        `settled ${key} as ${settlement.outcome} by ${settlement.by}; ` +
          "a running dispatcher records it in the owning actor\n",
      );
    });

  reconcile
    .command("retry")
    .description("run again, with the same key, an effect whose retries were exhausted (cause=retries-exhausted)")
    .argument("<key>", "the effect's idempotency key, e.g. order:42:payment")
    .option("--by <operator>", "who retries it (kept in its last error)")
    .option("--note <text>", "why, kept with it")
    .action(async (key: string, flags: { by?: string; note?: string }) => {
      if (!flags.by?.trim())
        throw new InvalidInputError(`cannot retry "${key}"`, ["--by <operator> is required: who retries it"]);
      const journal = await openJournal();
      const queue = new Reconciliation({ journal, clock });
      await queue.retry(key, { by: flags.by as string, note: flags.note });
      await recordAction(journal, clock, ids, {
        by: flags.by as string,
        action: "retry",
        target: key,
        outcome: "retrying",
        note: flags.note ?? null,
        via: "cli",
      });
      output.out(`retrying ${key} by ${flags.by} with a fresh retry budget; a running dispatcher runs it now\n`);
    });

  const effects = program.command("effects").description("effects across actors, from the outbox");
  effects
    .command("list")
    .description("list effects with their status")
    .option("--status <status>", `one of ${STATUSES.join(", ")}`)
    .option("--kind <kind>", "only this effect kind")
    .option("--owner <address>", "only effects of this actor")
    .option("--limit <n>", "at most n effects")
    .option("--json", "print JSON lines")
    .action(async (options: { status?: string; kind?: string; owner?: string; limit?: string; json?: boolean }) => {
      let status: EffectStatus | undefined;
      if (options.status !== undefined) {
        const parsed = statusOption.safeParse(options.status);
        if (!parsed.success) fail(`--status "${options.status}" is not a status`, parsed.error);
        status = parsed.data;
      }
      let limit: number | undefined;
      if (options.limit !== undefined) {
        const parsed = z.coerce.number().int().positive("--limit must be a positive integer").safeParse(options.limit);
        if (!parsed.success) fail(`--limit "${options.limit}" is not a positive integer`, parsed.error);
        limit = parsed.data;
      }
      const views = await listEffects(await openJournal(), {
        ...(status ? { status } : {}),
        ...(options.kind ? { kind: options.kind } : {}),
        ...(options.owner ? { owner: options.owner } : {}),
        ...(limit ? { limit } : {}),
      });
      if (options.json) {
        for (const v of views) output.out(`${JSON.stringify(v)}\n`);
        return;
      }
      for (const v of views) output.out(`${row(v)}\n`);
      output.out(`${views.length} effect(s)\n`);
    });
  registerReviveCommand(effects, openJournal, (text) => output.out(text), clock, ids);
}
