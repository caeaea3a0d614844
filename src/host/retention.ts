import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { Journal } from "../journal/types.js";
import { InboxRetention, type InboxRetentionOptions } from "../retention/inbox.js";
import type { RetentionJob } from "../retention/job.js";
import { OutboxRetention, type OutboxRetentionOptions } from "../retention/outbox.js";
import { PublishedRetention, type PublishedRetentionOptions } from "../retention/published.js";

type Given = "journal" | "clock" | "logger";

/**
 * The pruning jobs a host runs from `start()` to `stop()`: `true` runs the three with their
 * defaults (each keeps its records for the redelivery window, 7 days, and runs hourly); an object
 * tunes each one, or leaves it out with `false` (an absent one runs with its defaults).
 */
export type HostRetention =
  | boolean
  | {
      /** The inbox's dedup records (see `InboxRetention`). */
      inbox?: Omit<InboxRetentionOptions, Given> | false;
      /** The outbox's done rows (see `OutboxRetention`). */
      outbox?: Omit<OutboxRetentionOptions, Given> | false;
      /** The journal transport's published log (see `PublishedRetention`); kept until every reader passed it. */
      published?: Omit<PublishedRetentionOptions, Given> | false;
    };

/** The jobs `retention` asks for, on the host's journal, clock and logger; none for `false` or absent. */
export function retentionJobs(
  retention: HostRetention | undefined,
  shared: { journal: Journal; clock: Clock; logger?: Logger },
): RetentionJob[] {
  if (retention === undefined || retention === false) return [];
  const each = retention === true ? {} : retention;
  const jobs: RetentionJob[] = [];
  if (each.inbox !== false) jobs.push(new InboxRetention({ ...each.inbox, ...shared }));
  if (each.outbox !== false) jobs.push(new OutboxRetention({ ...each.outbox, ...shared }));
  if (each.published !== false) jobs.push(new PublishedRetention({ ...each.published, ...shared }));
  return jobs;
}
