import { InvalidInputError } from "../base/errors.js";
import { type BulkFilter, bulkAct, countOpen, describeBulk } from "../console/bulk.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import type { Journal } from "../journal/types.js";
import type { DeadLetters } from "../messaging/dead-letters.js";
import { parseDuration } from "./duration.js";

/** The filter flags of `dead-letters replay|discard` without an id. */
export interface BulkFlags {
  consumer?: string;
  errorContains?: string;
  since?: string;
  until?: string;
  dryRun?: boolean;
  expect?: string;
}

export const hasBulkFlags = (flags: BulkFlags): boolean =>
  flags.consumer !== undefined ||
  flags.errorContains !== undefined ||
  flags.since !== undefined ||
  flags.until !== undefined ||
  flags.dryRun === true ||
  flags.expect !== undefined;

/** A time flag: an ISO 8601 time (UTC when it names no zone), or a duration back from now (`2h`). */
function timeFlag(flag: string, value: string, now: number): number {
  if (/^\d+(\.\d+)?(ms|s|m|h|d|w)$/.test(value.trim())) return now - parseDuration(flag, value);
  const zoned = /(Z|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`;
  const ms = Date.parse(zoned);
  if (!Number.isFinite(ms)) {
    throw new InvalidInputError(
      `${flag} "${value}" must be a time (2026-05-01T12:00, UTC) or a duration back from now (2h)`,
    );
  }
  return ms;
}

export function bulkFilterOf(flags: BulkFlags, now: number): BulkFilter {
  if (
    flags.consumer === undefined &&
    flags.errorContains === undefined &&
    flags.since === undefined &&
    flags.until === undefined
  ) {
    throw new InvalidInputError(
      "give a dead letter's id, or a filter (--consumer, --error-contains, --since, --until) for every open one it matches",
    );
  }
  return {
    consumer: flags.consumer,
    errorContains: flags.errorContains,
    since: flags.since === undefined ? undefined : timeFlag("--since", flags.since, now),
    until: flags.until === undefined ? undefined : timeFlag("--until", flags.until, now),
  };
}

/**
 * `dead-letters replay|discard` with a filter: `--dry-run` prints how many open letters match;
 * acting needs `--expect <that count>`, so nobody acts on a set they did not count (a set that
 * changed since is refused). One operator action is recorded per letter.
 */
export async function runBulk(
  options: {
    journal: Journal;
    deadLetters: () => Promise<DeadLetters>;
    clock: Clock;
    ids: IdGenerator;
    out: (text: string) => void;
    who: { by: string; note: string | null };
  },
  action: "replay" | "discard",
  flags: BulkFlags,
): Promise<void> {
  const filter = bulkFilterOf(flags, options.clock.now());
  if (flags.dryRun) {
    const matched = await countOpen(options.journal, filter);
    options.out(`${matched} open dead letter(s) match; ${action} them with --expect ${matched}\n`);
    return;
  }
  if (flags.expect === undefined || !/^\d+$/.test(flags.expect)) {
    throw new InvalidInputError("count first with --dry-run, then act with --expect <the count it printed>");
  }
  const result = await bulkAct(
    { ...options, deadLetters: await options.deadLetters(), via: "cli", ...options.who },
    action,
    filter,
    Number(flags.expect),
  );
  for (const d of result.done) options.out(`${d.id}: ${d.outcome}\n`);
  for (const f of result.failed) options.out(`${f.id}: failed: ${f.error}\n`);
  options.out(`${describeBulk(result)}\n`);
  if (result.failed.length > 0) process.exitCode = 1;
}
