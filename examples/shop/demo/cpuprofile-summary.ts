import { readFileSync } from "node:fs";

/**
 * Summary of a V8 `.cpuprofile` (from `--cpu-prof`, e.g. a demo worker run with
 * `ONCELY_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/shop-prof"`): self time, inclusive
 * time and the callers of chosen functions, by function name and file (tsx hides line numbers).
 *
 *   npx tsx examples/shop/demo/cpuprofile-summary.ts FILE.cpuprofile [top] [callers-regex]
 *
 * Caution when reading it: V8 samples by wall clock, so a synchronous native call that waits
 * (better-sqlite3 in an fsync) is counted as the self time of the JS function that made it.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalUs: number;
  /** Per function, microseconds, highest first. */
  self: [string, number][];
  inclusive: [string, number][];
  /** For each function matching the callers pattern: its direct callers, microseconds spent under it from each. */
  callers: Map<string, [string, number][]>;
}

const shortUrl = (url: string) =>
  url
    .replace(/^file:\/\//, "")
    .replace(/.*\/node_modules\//, "nm:")
    .replace(/.*\/(src|examples)\//, "$1/");

const nameOf = (node: ProfileNode) => `${node.callFrame.functionName || "(anonymous)"} ${shortUrl(node.callFrame.url)}`;

const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);

const add = (m: Map<string, number>, key: string, us: number) => m.set(key, (m.get(key) ?? 0) + us);

export function summarizeProfile(profile: CpuProfile, callersOf?: RegExp): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const callers = new Map<string, Map<string, number>>();
  let totalUs = 0;
  profile.samples.forEach((leafId, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    totalUs += us;
    const leaf = byId.get(leafId);
    if (!leaf) return;
    add(self, nameOf(leaf), us);
    // A function counts once per sample however often it recurses on the stack.
    const seen = new Set<string>();
    for (let id: number | undefined = leafId; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id) as ProfileNode;
      const name = nameOf(node);
      if (seen.has(name)) continue;
      seen.add(name);
      add(inclusive, name, us);
      if (callersOf?.test(name)) {
        const up = parent.get(id);
        const caller = up === undefined ? "(none)" : nameOf(byId.get(up) as ProfileNode);
        const from = callers.get(name) ?? new Map<string, number>();
        callers.set(name, add(from, caller, us));
      }
    }
  });
  return {
    totalUs,
    self: sorted(self),
    inclusive: sorted(inclusive),
    callers: new Map([...callers].map(([name, m]) => [name, sorted(m)])),
  };
}

export function formatSummary(summary: ProfileSummary, top = 30): string {
  const row = ([name, us]: [string, number]) =>
    `${(us / 1e6).toFixed(2).padStart(8)} s ${((100 * us) / summary.totalUs).toFixed(1).padStart(5)}%  ${name}`;
  const lines = [`total ${(summary.totalUs / 1e6).toFixed(2)} s sampled`, "-- self"];
  lines.push(...summary.self.slice(0, top).map(row), "-- inclusive", ...summary.inclusive.slice(0, top).map(row));
  for (const [name, from] of summary.callers) lines.push(`-- callers of ${name}`, ...from.slice(0, 10).map(row));
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top, callers] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: cpuprofile-summary.ts FILE.cpuprofile [top] [callers-regex]\n");
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const summary = summarizeProfile(profile, callers ? new RegExp(callers) : undefined);
  process.stdout.write(`${formatSummary(summary, top ? Number(top) : 30)}\n`);
}
