import { InvalidInputError } from "../base/errors.js";
import { DEFAULT_SLICE_COUNT, type Ownership } from "../core/slices.js";

/**
 * The `slices` a claimer passes to `claimOutbox` for what its worker owns now: undefined (no filter
 * at all) without an ownership or when it owns every slice, so a single worker pays nothing.
 */
export function ownedSlices(ownership: Ownership | undefined): number[] | undefined {
  if (!ownership) return undefined;
  const owned: number[] = [];
  for (let slice = 0; slice < ownership.sliceCount; slice++) if (ownership.owns(slice)) owned.push(slice);
  return owned.length === ownership.sliceCount ? undefined : owned;
}

/** Throws unless the ownership counts slices as the journal does (else claims would name other slices). */
export function requireSameSliceCount(
  who: string,
  ownership: Ownership | undefined,
  journal: { readonly sliceCount?: number | undefined },
): void {
  if (!ownership) return;
  const journalCount = journal.sliceCount ?? DEFAULT_SLICE_COUNT;
  if (ownership.sliceCount !== journalCount) {
    throw new InvalidInputError(
      `${who}: its ownership counts ${ownership.sliceCount} slices and its journal ${journalCount}: give both the same sliceCount`,
    );
  }
}
