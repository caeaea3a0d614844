import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU used so far by the PostgreSQL and NATS servers running on this machine, in ms, from /proc:
 * for each, the user + system time of its live processes plus, for PostgreSQL, what its postmaster
 * reaped from the backends that exited (cutime + cstime): a backend that ends between two readings
 * moves its time from the first sum to the second, so a difference of two readings is the servers'
 * CPU in between. Undefined where there is no /proc or the server runs elsewhere (a remote database).
 */
export interface ServerCpu {
  postgresMs: number | undefined;
  natsMs: number | undefined;
}

const TICK_MS = 10; // USER_HZ 100

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
  reapedTicks: number;
}

function processes(): Proc[] {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found: Proc[] = [];
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      // Fields after ") ": state ppid ... utime(12th) stime(13th) cutime(14th) cstime(15th), counted from state as 1st.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      found.push({
        pid: Number(pid),
        ppid: Number(f[1]),
        comm,
        ticks: Number(f[11]) + Number(f[12]),
        reapedTicks: Number(f[13]) + Number(f[14]),
      });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export function serverCpu(): ServerCpu {
  const all = processes();
  const postgres = all.filter((p) => p.comm === "postgres" || p.comm.startsWith("postgres:"));
  const postmasters = postgres.filter((p) => !postgres.some((parent) => parent.pid === p.ppid));
  const nats = all.filter((p) => p.comm === "nats-server");
  const sum = (ps: Proc[], reaped: Proc[]) =>
    (ps.reduce((n, p) => n + p.ticks, 0) + reaped.reduce((n, p) => n + p.reapedTicks, 0)) * TICK_MS;
  return {
    postgresMs: postgres.length > 0 ? sum(postgres, postmasters) : undefined,
    natsMs: nats.length > 0 ? sum(nats, []) : undefined,
  };
}

/** `after - before` per server, undefined where either reading is. */
export function serverCpuSince(before: ServerCpu, after: ServerCpu): ServerCpu {
  const minus = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : a - b;
  return { postgresMs: minus(after.postgresMs, before.postgresMs), natsMs: minus(after.natsMs, before.natsMs) };
}
