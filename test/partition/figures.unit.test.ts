import { describe, expect, it } from "vitest";
import { parseScaleArgs } from "../../bench/scale.js";
import { serverCpuSince } from "../../bench/server-cpu.js";
import { tcpCounter } from "../../examples/shop/demo/netns.js";
import { sumMetric } from "../../examples/shop/demo/worker-figures.js";

describe("the figures the partition runs and the scale bench read", () => {
  it("sums every series of one metric in a Prometheus exposition, and no other metric sharing its prefix", () => {
    const text = [
      "# HELP oncely_version_conflicts_total Commits refused",
      "# TYPE oncely_version_conflicts_total counter",
      'oncely_version_conflicts_total{actor="order"} 3',
      'oncely_version_conflicts_total{actor="payment"} 4',
      "oncely_version_conflicts_total_extra 100",
      "oncely_commands_total 9",
    ].join("\n");
    expect(sumMetric(text, "oncely_version_conflicts_total")).toBe(7);
    expect(sumMetric(text, "oncely_commands_total")).toBe(9);
    expect(sumMetric(text, "absent")).toBe(0);
  });

  it("reads a Tcp counter of /proc/net/snmp by its header", () => {
    const snmp = [
      "Ip: Forwarding DefaultTTL",
      "Ip: 2 64",
      "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors",
      "Tcp: 1 200 120000 -1 2 0 0 0 1 4 8 12 0 0 0",
    ].join("\n");
    expect(tcpCounter(snmp, "RetransSegs")).toBe(12);
    expect(() => tcpCounter(snmp, "Nope")).toThrow(/no Tcp Nope/);
  });

  it("takes any list of worker counts, and refuses what is not one", () => {
    expect(parseScaleArgs(["scale", "--workers", "1,2,4", "--orders", "50"])).toMatchObject({
      workers: [1, 2, 4],
      orders: 50,
      transport: "nats",
    });
    expect(parseScaleArgs([]).workers).toEqual([1, 2, 3]);
    expect(parseScaleArgs([]).rate).toBeUndefined();
    expect(parseScaleArgs([]).peers).toBe(true);
    expect(parseScaleArgs(["--no-peers"]).peers).toBe(false);
    expect(parseScaleArgs(["--rate", "12.5"]).rate).toBe(12.5);
    expect(() => parseScaleArgs(["--rate", "0"])).toThrow(/--rate/);
    expect(() => parseScaleArgs(["--rate", "fast"])).toThrow(/--rate/);
    expect(() => parseScaleArgs(["--workers", "1,x"])).toThrow(/--workers/);
    expect(() => parseScaleArgs(["--transport", "kafka"])).toThrow(/--transport/);
    expect(() => parseScaleArgs(["--db", "mysql://x"])).toThrow(/--db/);
    expect(parseScaleArgs([]).slices).toBeUndefined();
    expect(parseScaleArgs(["--slices", "16"]).slices).toBe(16);
    for (const bad of ["12", "0", "lots"]) expect(() => parseScaleArgs(["--slices", bad])).toThrow(/--slices/);
  });

  it("takes the servers' CPU between two readings, and none where either reading has none", () => {
    expect(serverCpuSince({ postgresMs: 1_000, natsMs: 50 }, { postgresMs: 1_750, natsMs: 80 })).toEqual({
      postgresMs: 750,
      natsMs: 30,
    });
    expect(serverCpuSince({ postgresMs: undefined, natsMs: 50 }, { postgresMs: 10, natsMs: undefined })).toEqual({
      postgresMs: undefined,
      natsMs: undefined,
    });
  });
});
