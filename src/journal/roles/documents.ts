export interface DocumentRecord {
  collection: string;
  id: string;
  doc: unknown;
  updatedAt: number;
}

/** The documents' part of a commit (see `Commit`). */
export interface DocumentWrites {
  /** Upsert (doc) or delete (null) read-model documents. */
  documents?: { collection: string; id: string; doc: unknown | null }[] | undefined;
}

/**
 * Read-model documents: what projections keep, by collection and id. Written only by a commit
 * (`Commit.documents`), in the same transaction as the projection's checkpoint.
 */
export interface DocumentReader {
  getDocument(collection: string, id: string): Promise<DocumentRecord | undefined>;
  listDocuments(collection: string, limit?: number): Promise<DocumentRecord[]>;
}
