import { readFileSync } from "node:fs";

/** What each worker did in a demo run, read just before it is stopped. */
export interface WorkerFigures {
  pid: number | undefined;
  /**
   * CPU (user + system) the worker's current incarnation used from the client's first order to the
   * last order's end (to now, for an incarnation started after that end).
   */
  cpuMs: number;
  /** `oncely_version_conflicts_total`, all actor types: commits refused because another writer moved the stream first. */
  versionConflicts: number;
  /** `oncely_commands_total`, all actor types. */
  commands: number;
  /** `oncely_commands_sent_to_peer_total`: commands this worker sent straight to the owner of their slice. */
  sentToPeer: number;
  /** `oncely_commands_forwarded_total`: commands this worker forwarded to their owner through the journal. */
  forwardedThroughJournal: number;
  /** Set when GET /metrics did not answer (the counters above are then 0). */
  metricsError?: string;
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every architecture node runs on. */
const TICKS_PER_SECOND = 100;

/** CPU time (ms) of a process so far, from /proc/<pid>/stat; 0 where there is no /proc. */
export function workerCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, hence the last ")"): utime is the 14th
    // field of the line, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The sum of every series of `name` in a Prometheus text exposition. */
export function sumMetric(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || (line[name.length] !== "{" && line[name.length] !== " ")) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) total += value;
  }
  return total;
}

export async function workerFigures(
  workers: readonly { pid: number | undefined; url: string }[],
  cpuAtStart: ReadonlyMap<number | undefined, number>,
  cpuAtEnd: ReadonlyMap<number | undefined, number> = new Map(),
): Promise<WorkerFigures[]> {
  return Promise.all(
    workers.map(async ({ pid, url }) => {
      const cpuMs = pid === undefined ? 0 : (cpuAtEnd.get(pid) ?? workerCpuMs(pid)) - (cpuAtStart.get(pid) ?? 0);
      try {
        const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
        if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
        const text = await response.text();
        return {
          pid,
          cpuMs,
          versionConflicts: sumMetric(text, "oncely_version_conflicts_total"),
          commands: sumMetric(text, "oncely_commands_total"),
          sentToPeer: sumMetric(text, "oncely_commands_sent_to_peer_total"),
          forwardedThroughJournal: sumMetric(text, "oncely_commands_forwarded_total"),
        };
      } catch (error) {
        const metricsError = error instanceof Error ? error.message : String(error);
        return {
          pid,
          cpuMs,
          versionConflicts: 0,
          commands: 0,
          sentToPeer: 0,
          forwardedThroughJournal: 0,
          metricsError,
        };
      }
    }),
  );
}
