import type { ConsumerStateReader } from "./roles/consumer-state.js";
import type { DocumentReader } from "./roles/documents.js";
import type { InboxReader } from "./roles/inbox.js";
import type { StateAnswers, StateReader, StateReads } from "./roles/state-reads.js";

/** What `readState` reads, one role each. */
export type StateReadSources = InboxReader & Pick<ConsumerStateReader, "getCheckpoint" | "getParked"> & DocumentReader;

/**
 * `readState` for a store that reads one thing at a time (a journal a test or a user made smaller
 * than `Journal`): the reads one after another, checkpoints first. Not one view: a commit may land
 * between two reads. Callers that depend on a consistent view order their lists so that this is
 * safe (a checkpoint read before the inbox row: a handled event's row and checkpoint advance are one
 * commit, so a checkpoint past the version is always seen with the row that makes it a duplicate).
 */
export async function readStateOneByOne(journal: StateReadSources, reads: StateReads): Promise<StateAnswers> {
  const checkpoints: number[] = [];
  for (const read of reads.checkpoints ?? []) checkpoints.push(await journal.getCheckpoint(read.consumer, read.source));
  const inbox: StateAnswers["inbox"] = [];
  for (const read of reads.inbox ?? []) inbox.push(await journal.getInbox(read.consumer, read.messageId));
  const parked: StateAnswers["parked"] = [];
  for (const read of reads.parked ?? []) parked.push(await journal.getParked(read.consumer, read.source, read.version));
  const documents: StateAnswers["documents"] = [];
  for (const read of reads.documents ?? []) documents.push(await journal.getDocument(read.collection, read.id));
  return { checkpoints, inbox, parked, documents };
}

/** The journal's own `readState` when it has one, else the reads one by one. */
export function readState(journal: StateReadSources & Partial<StateReader>, reads: StateReads): Promise<StateAnswers> {
  return journal.readState ? journal.readState(reads) : readStateOneByOne(journal, reads);
}
