import { describe, expect, it } from "vitest";
import {
  DEFAULT_CHROMIUM,
  ensureChromium,
  INSTALL_COMMANDS,
  type MachineFacts,
  planChromium,
} from "../../scripts/ensure-chromium.js";

// `npm test` runs scripts/ensure-chromium.ts first: what it decides on each kind of machine.

const machine = (over: Partial<MachineFacts> & { present?: string[] } = {}): MachineFacts => {
  const present = new Set(over.present ?? []);
  return {
    chromiumPath: undefined,
    executable: (path) => present.has(path),
    isRoot: false,
    hasAptGet: true,
    ...over,
  };
};

describe("ensure-chromium", () => {
  it("goes on when Debian's chromium is there, root or not", () => {
    for (const isRoot of [true, false]) {
      expect(planChromium(machine({ isRoot, present: [DEFAULT_CHROMIUM] }))).toEqual({
        action: "ready",
        path: DEFAULT_CHROMIUM,
      });
    }
  });

  it("installs Debian's chromium with apt-get when it is missing and we are root", () => {
    expect(planChromium(machine({ isRoot: true }))).toEqual({ action: "install", commands: INSTALL_COMMANDS });
    expect(INSTALL_COMMANDS).toEqual([
      ["apt-get", "update"],
      ["apt-get", "install", "-y", "chromium"],
    ]);
  });

  it("stops when it is missing and we are not root, saying exactly what to run", () => {
    const plan = planChromium(machine({ isRoot: false }));
    expect(plan.action).toBe("fail");
    expect(plan.action === "fail" && plan.message).toContain("sudo apt-get update && sudo apt-get install -y chromium");
    expect(ensureChromium(machine({ isRoot: false }))).toBe(1);
  });

  it("stops when root has no apt-get, naming CHROMIUM_PATH", () => {
    const plan = planChromium(machine({ isRoot: true, hasAptGet: false }));
    expect(plan).toMatchObject({ action: "fail", message: expect.stringContaining("CHROMIUM_PATH") });
  });

  it("uses CHROMIUM_PATH when set, never installing over it, and names it when it is not there", () => {
    const custom = "/opt/chrome/chrome";
    expect(planChromium(machine({ chromiumPath: custom, present: [custom], isRoot: true }))).toEqual({
      action: "ready",
      path: custom,
    });
    const missing = planChromium(machine({ chromiumPath: custom, isRoot: true, present: [DEFAULT_CHROMIUM] }));
    expect(missing).toMatchObject({ action: "fail", message: expect.stringContaining(`CHROMIUM_PATH is ${custom}`) });
    expect(ensureChromium(machine({ chromiumPath: custom, present: [custom] }))).toBe(0);
  });
});
