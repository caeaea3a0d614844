import { NotRegisteredError, RuntimeClosedError } from "../base/errors.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import type { DeadLetterMatch } from "../journal/console-queries.js";
import type { DeadLetters } from "../messaging/dead-letters.js";
import { recordAction } from "./audit.js";
import { ConsoleHttpError } from "./errors.js";
import type { ConsoleJournal } from "./options.js";

/** Which open dead letters a bulk action takes: those of a consumer, an error text, a failure time range. */
export type BulkFilter = Omit<DeadLetterMatch, "status">;

export interface BulkOptions {
  journal: ConsoleJournal;
  deadLetters: DeadLetters;
  clock: Clock;
  ids: IdGenerator;
  via: "console" | "cli";
  by: string;
  note: string | null;
}

export interface BulkResult {
  action: "replay" | "discard";
  /** Open dead letters matching the filter when the action started. */
  matched: number;
  /** Each letter the action took, with its outcome (each one also an operator action). */
  done: { id: string; outcome: string }[];
  /** Each letter it could not take (it stays open), with why. */
  failed: { id: string; error: string }[];
}

/** Letters read per page while acting: each page is one short read, whatever the total. */
const BATCH = 100;

/** How many open dead letters match: the dry run an operator reads before acting. */
export function countOpen(journal: ConsoleJournal, filter: BulkFilter): Promise<number> {
  return journal.countDeadLetters({ ...filter, status: "open" });
}

/**
 * Replay (through its consumer, as `DeadLetters.replay`) or discard every open dead letter that
 * matches, one at a time, recording one operator action per letter taken. `expected` is the count
 * the operator was shown by the dry run: a different count now (letters came or went since) refuses
 * the action (409) before anything is done, so nobody acts on a set they did not see.
 *
 * A letter whose replay fails stays open and is listed in `failed`; the action goes on with the
 * next. A consumer not registered for replay (or a runtime closing) stops it there, since every
 * letter after it would fail the same way; what was done until then stays done and recorded.
 * Failure window: a crash between a letter's replay and its record loses that one record, never
 * the replay (as for a single replay).
 */
export async function bulkAct(
  options: BulkOptions,
  action: "replay" | "discard",
  filter: BulkFilter,
  expected: number,
): Promise<BulkResult> {
  const { journal } = options;
  const matched = await countOpen(journal, filter);
  if (matched !== expected) {
    throw new ConsoleHttpError(
      409,
      `${matched} open dead letter(s) match now, not ${expected}: count again (dry run) before acting`,
    );
  }
  const result: BulkResult = { action, matched, done: [], failed: [] };
  let after: string | undefined;
  do {
    const page = await journal.pageDeadLetters({ ...filter, status: "open", after, limit: BATCH });
    for (const letter of page.items) {
      try {
        const outcome = await takeOne(options, action, letter.id);
        await recordAction(journal, options.clock, options.ids, {
          by: options.by,
          action,
          target: letter.id,
          outcome,
          note: options.note,
          via: options.via,
        });
        result.done.push({ id: letter.id, outcome });
      } catch (error) {
        if (error instanceof NotRegisteredError || error instanceof RuntimeClosedError) {
          if (result.done.length === 0) throw error;
          result.failed.push({ id: letter.id, error: `${(error as Error).message}; stopped here` });
          return result;
        }
        result.failed.push({ id: letter.id, error: (error as Error).message });
      }
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  return result;
}

async function takeOne(options: BulkOptions, action: "replay" | "discard", id: string): Promise<string> {
  if (action === "discard") {
    await options.deadLetters.discard(id);
    return "discarded";
  }
  const replayed = await options.deadLetters.replay(id);
  return replayed.released > 0 ? `${replayed.outcome}, released ${replayed.released}` : replayed.outcome;
}

/** One line for people: `replayed 12 of 12 matching dead letters; 0 failed`. */
export function describeBulk(result: BulkResult): string {
  const verb = result.action === "replay" ? "replayed" : "discarded";
  const failures = result.failed.map((f) => `${f.id}: ${f.error}`).join("; ");
  return (
    `${verb} ${result.done.length} of ${result.matched} matching dead letter(s)` +
    (result.failed.length ? `; ${result.failed.length} failed (they stay open): ${failures}` : "")
  );
}
