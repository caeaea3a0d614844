/**
 * The journal's published log, shared by every back end: the checkpoint source under which a
 * reader of the log keeps its position. A reader's position is an ordinary checkpoint, so it can
 * be advanced in any commit with `Commit.checkpoint` (guarded by `expected`), and retention
 * (`prunePublished`) keeps every entry some registered reader has not passed.
 */
export const PUBLISHED_READER_SOURCE = "oncely.published";
