import type { ParkedRecord } from "./consumer-state.js";
import type { DocumentRecord } from "./documents.js";
import type { InboxRecord } from "./inbox.js";

/**
 * Point reads of consumer state asked for together: what one delivery needs before it decides (the
 * source's checkpoint, the message's inbox row, what is parked at its version; a projection's
 * document and its revision). Each list is answered in its own order.
 */
export interface StateReads {
  checkpoints?: readonly { consumer: string; source: string }[] | undefined;
  inbox?: readonly { consumer: string; messageId: string }[] | undefined;
  parked?: readonly { consumer: string; source: string; version: number }[] | undefined;
  documents?: readonly { collection: string; id: string }[] | undefined;
}

/** The answers to `StateReads`, list for list: 0 for a checkpoint never set, undefined for a row not there. */
export interface StateAnswers {
  checkpoints: number[];
  inbox: (InboxRecord | undefined)[];
  parked: (ParkedRecord | undefined)[];
  documents: (DocumentRecord | undefined)[];
}

/**
 * Several point reads as one: every answer from ONE view of the journal (no commit lands between
 * two of them), in one round trip where the store is remote (PostgreSQL: one statement). A
 * sequenced delivery reads its checkpoint, inbox row and parked version at once, where three reads
 * in a row would cost three round trips and would have to be ordered with care (a commit landing
 * between them could make a handled event look new).
 */
export interface StateReader {
  readState(reads: StateReads): Promise<StateAnswers>;
}
