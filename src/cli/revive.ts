import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import { recordAction } from "../console/audit.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import { EffectNotFoundError } from "../effects/errors.js";
import type { EffectView } from "../effects/types.js";
import { effectView } from "../effects/view.js";
import type { EventStore, OutboxReader, OutboxStore } from "../journal/types.js";

/** What reviving uses of the journal: the row, its forced update, and the recorded action (a commit). */
export type ReviveJournal = Pick<OutboxReader, "getOutbox"> &
  Pick<OutboxStore, "forceOutbox"> &
  Pick<EventStore, "commit">;

export interface Revival {
  /** Who revives it (recorded). */
  by: string;
  /** Why, e.g. "decide fixed in v1.4: it now records the outcome". */
  note?: string | undefined;
}

const revivalSchema = z.object({
  by: z.string({ error: "--by <operator> is required: who revives it" }).trim().min(1, "--by must not be empty"),
  note: z.string().optional(),
});

/**
 * Put a `dead` effect back to work: its row goes `pending`, due now, with everything it holds
 * kept (an outcome already known is delivered to the owner again, never run again; the key never
 * changes). A row goes dead when its owner rejected the outcome (a `decide` that refused it):
 * revive it once that code is fixed and deployed, or it goes dead again.
 *
 * The action is recorded first, in `oncely.operator-actions` (who, when, why, the error it had),
 * where the console's Operator actions page shows it. Failure window: a crash between that record and the row's update leaves a
 * recorded revival of a row still dead; reviving again is safe.
 */
export async function reviveEffect(
  journal: ReviveJournal,
  key: string,
  revival: Revival,
  clock?: Clock,
  ids?: IdGenerator,
): Promise<EffectView> {
  const env = resolveEnvironment({ clock, ids });
  const parsed = revivalSchema.safeParse(revival);
  if (!parsed.success) {
    throw new InvalidInputError(
      `cannot revive "${key}"`,
      parsed.error.issues.map((issue) => issue.message),
    );
  }
  const row = await journal.getOutbox(key);
  if (row?.category !== "effect") throw new EffectNotFoundError(key);
  if (row.status !== "dead") {
    throw new InvalidInputError(
      `effect "${key}" is not dead (its outbox status is "${row.status}"): only a dead effect can be revived`,
    );
  }
  const action = await recordAction(journal, env.clock, env.ids, {
    by: parsed.data.by,
    action: "revive",
    target: key,
    outcome: "revived",
    note: parsed.data.note ?? null,
    via: "cli",
    previousError: row.lastError,
  });
  const now = env.clock.now();
  const revived = await journal.forceOutbox(
    key,
    { status: "pending", notBefore: now, lastError: `revived by ${action.by}; it was dead: ${row.lastError ?? "?"}` },
    now,
  );
  if (!revived) throw new InvalidInputError(`effect "${key}" changed while being revived; look at it again`);
  const updated = await journal.getOutbox(key);
  return effectView(updated ?? row);
}

/** `oncely effects revive <key> --by <operator> [--note <text>]`. */
export function registerReviveCommand(
  effects: Command,
  openJournal: () => Promise<ReviveJournal>,
  out: (text: string) => void,
  clock?: Clock,
  ids?: IdGenerator,
): void {
  effects
    .command("revive")
    .description("put a dead effect back to work with the same key (after fixing what rejected its outcome)")
    .argument("<key>", "the effect's idempotency key, e.g. order:42:payment")
    .option("--by <operator>", "who revives it (recorded in oncely.operator-actions)")
    .option("--note <text>", "why, kept with the record")
    .action(async (key: string, flags: { by?: string; note?: string }) => {
      const view = await reviveEffect(
        await openJournal(),
        key,
        { by: flags.by as string, note: flags.note },
        clock,
        ids,
      );
      out(`revived ${key} (${view.kind}, owner ${view.owner}) by ${flags.by}; a running dispatcher picks it up now\n`);
    });
}
