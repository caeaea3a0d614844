import { CheckpointConflictError, TerminalError } from "../base/errors.js";
import type { ConsumerState, ConsumerStateReader, DocumentReader, EventStore } from "../journal/types.js";

/**
 * Documents belong to the consumer that writes them. A second consumer writing the same collection
 * (most often the same projection renamed) would apply every event again on top of the first's
 * documents, doubling them without a word; so each collection names its owner, and a consumer of
 * another name is refused. `rebuildProjection` takes a collection over (it deletes the documents
 * first); `retireConsumer` gives one up.
 */
export const COLLECTION_OWNERS = "oncely.collection-owners";

export interface CollectionOwner {
  consumer: string;
  since: number;
  /** Set while a rebuild runs; a rebuild that crashed leaves it set, and the collection refused. */
  rebuilding: boolean;
}

/** A consumer refused a collection that another consumer owns, or that a rebuild holds. */
export class CollectionOwnedError extends TerminalError {
  constructor(
    readonly collection: string,
    readonly consumer: string,
    readonly owner: CollectionOwner,
  ) {
    super(
      owner.rebuilding
        ? `collection "${collection}" is being rebuilt by "${owner.consumer}" (or its rebuild stopped half way): let rebuildProjection finish, or run it again, before consumer "${consumer}" writes it`
        : `collection "${collection}" is written by consumer "${owner.consumer}", so consumer "${consumer}" may not write it: two writers would apply every event twice. Rebuild it under the new name (rebuildProjection deletes the documents first), or retire "${owner.consumer}" (retireConsumer), or give this projection a collection of its own`,
    );
  }
}

/** The collection's owner, if any. */
export async function collectionOwner(
  journal: Pick<DocumentReader, "getDocument">,
  collection: string,
): Promise<CollectionOwner | undefined> {
  return (await journal.getDocument(COLLECTION_OWNERS, collection))?.doc as CollectionOwner | undefined;
}

/** What claiming a collection uses of the journal: the owner record, its revision, one guarded commit. */
export type OwnerJournal = Pick<EventStore, "commit"> &
  Pick<ConsumerStateReader, "getCheckpoint"> &
  Pick<DocumentReader, "getDocument">;

/**
 * Claim a collection for `consumer`: its own already, or free and now taken. Refuses with
 * `CollectionOwnedError` otherwise. The owner record is written under a revision guard, so of two
 * consumers claiming at once one wins and the other reads it and is refused.
 */
export async function claimCollection(journal: OwnerJournal, collection: string, consumer: string, now: number) {
  for (;;) {
    const owner = await collectionOwner(journal, collection);
    if (owner && (owner.consumer !== consumer || owner.rebuilding)) {
      throw new CollectionOwnedError(collection, consumer, owner);
    }
    if (owner) return;
    try {
      await setOwner(journal, collection, { consumer, since: now, rebuilding: false }, now);
      return;
    } catch (error) {
      if (!(error instanceof CheckpointConflictError)) throw error;
    }
  }
}

/** Write (or, with `null`, remove) a collection's owner record, guarded by its revision. */
export async function setOwner(
  journal: Pick<EventStore, "commit"> & Pick<ConsumerStateReader, "getCheckpoint">,
  collection: string,
  owner: CollectionOwner | null,
  now: number,
): Promise<void> {
  const revision = await journal.getCheckpoint(COLLECTION_OWNERS, collection);
  await journal.commit({
    checkpoint: { consumer: COLLECTION_OWNERS, source: collection, version: revision + 1, expected: revision },
    documents: [{ collection: COLLECTION_OWNERS, id: collection, doc: owner }],
    now,
  });
}

/**
 * Retire a consumer for good: forget everything it handled (inbox, checkpoints, parked, its
 * documents' revisions and gap alerts' dedup), including its position in the published log, so
 * that it no longer holds back retention; and give up the collections it owns. Its documents and
 * dead letters stay. Stop it everywhere first.
 */
export async function retireConsumer(
  journal: Pick<EventStore, "commit"> &
    Pick<ConsumerState, "forgetConsumer" | "getCheckpoint"> &
    Pick<DocumentReader, "listDocuments">,
  name: string,
  now: number,
): Promise<{ inbox: number; checkpoints: number; parked: number; collections: string[] }> {
  const total = { inbox: 0, checkpoints: 0, parked: 0 };
  for (const owner of [name, `${name}#doc`, `${name}#gaps`]) {
    const forgotten = await journal.forgetConsumer(owner);
    total.inbox += forgotten.inbox;
    total.checkpoints += forgotten.checkpoints;
    total.parked += forgotten.parked;
  }
  const collections: string[] = [];
  for (const record of await journal.listDocuments(COLLECTION_OWNERS)) {
    if ((record.doc as CollectionOwner).consumer !== name) continue;
    await setOwner(journal, record.id, null, now);
    collections.push(record.id);
  }
  return { ...total, collections };
}
