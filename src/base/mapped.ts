/**
 * `items.map(each)`, built by `push` so the array's shape (its V8 elements kind) is the same
 * whether or not V8 has optimized the caller. Why it matters here: TurboFan's inlined
 * `Array.prototype.map` allocates a holey array where the unoptimized builtin makes a packed one,
 * so once a commit builder was optimized, every function that had learned the packed arrays met a
 * new map and was deoptimized and compiled again (measured on the order workflow with
 * `--trace-deopt`: 13 "wrong map" deopts in `encodeParts`, `applied`, `requireStorableCommit`,
 * `handRowsOver`, `commitJson` and others, none with this; see *The sixth sitting of 2026-12-02* in
 * docs/benchmarks.md). Used where arrays travel along the commit path.
 */
export function mapped<T, U>(items: readonly T[], each: (item: T, index: number) => U): U[] {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) out.push(each(items[i] as T, i));
  return out;
}
