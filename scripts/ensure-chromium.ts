import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { pathToFileURL } from "node:url";

/**
 * First step of `npm test`: the console's browser test (test/console/console.e2e.test.ts) drives
 * Debian's `chromium` through playwright-core, which never downloads a browser. So before the
 * tests start: the browser is there, or it is installed from Debian (when we are root), or the
 * run stops here saying exactly what to run. Never a download of a browser build.
 */

export const DEFAULT_CHROMIUM = "/usr/bin/chromium";
export const INSTALL_COMMANDS: readonly (readonly string[])[] = [
  ["apt-get", "update"],
  ["apt-get", "install", "-y", "chromium"],
];

/** What this machine looks like, as far as the decision goes (read by `machineFacts`). */
export interface MachineFacts {
  /** `CHROMIUM_PATH` when set: the test uses that browser instead of Debian's. */
  chromiumPath: string | undefined;
  executable(path: string): boolean;
  isRoot: boolean;
  hasAptGet: boolean;
}

export type ChromiumPlan =
  | { action: "ready"; path: string }
  | { action: "install"; commands: readonly (readonly string[])[] }
  | { action: "fail"; message: string };

const howToInstall =
  "Install Debian's chromium, then run npm test again:\n" +
  "  sudo apt-get update && sudo apt-get install -y chromium\n" +
  "(or point CHROMIUM_PATH at a Chromium or Chrome binary).";

/** The decision, from the facts alone. */
export function planChromium(facts: MachineFacts): ChromiumPlan {
  if (facts.chromiumPath !== undefined && facts.chromiumPath !== "") {
    if (facts.executable(facts.chromiumPath)) return { action: "ready", path: facts.chromiumPath };
    return {
      action: "fail",
      message: `CHROMIUM_PATH is ${facts.chromiumPath}, which is not an executable file. Fix CHROMIUM_PATH, or unset it to use Debian's chromium at ${DEFAULT_CHROMIUM}.`,
    };
  }
  if (facts.executable(DEFAULT_CHROMIUM)) return { action: "ready", path: DEFAULT_CHROMIUM };
  if (!facts.isRoot) {
    return {
      action: "fail",
      message: `The console's browser test needs Debian's chromium at ${DEFAULT_CHROMIUM}, which is missing, and this user is not root, so npm test cannot install it.\n${howToInstall}`,
    };
  }
  if (!facts.hasAptGet) {
    return {
      action: "fail",
      message: `The console's browser test needs chromium at ${DEFAULT_CHROMIUM}, which is missing, and there is no apt-get to install it with. Install Chromium with this system's package manager and set CHROMIUM_PATH to it.`,
    };
  }
  return { action: "install", commands: INSTALL_COMMANDS };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function machineFacts(env: NodeJS.ProcessEnv = process.env): MachineFacts {
  return {
    chromiumPath: env.CHROMIUM_PATH,
    executable,
    isRoot: process.getuid?.() === 0,
    hasAptGet: spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0,
  };
}

/** Carry the plan out; the exit code for the test script (0: go on with the tests). */
export function ensureChromium(facts: MachineFacts = machineFacts()): number {
  const plan = planChromium(facts);
  if (plan.action === "ready") return 0;
  if (plan.action === "fail") {
    process.stderr.write(`ensure-chromium: ${plan.message}\n`);
    return 1;
  }
  process.stderr.write(`ensure-chromium: ${DEFAULT_CHROMIUM} is missing; installing Debian's chromium\n`);
  for (const [command, ...args] of plan.commands) {
    process.stderr.write(`ensure-chromium: ${[command, ...args].join(" ")}\n`);
    // Output shown as it comes: a slow mirror or a failing install is visible, not a silent wait.
    const run = spawnSync(command as string, args, {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (run.status !== 0) {
      const why = run.error ? run.error.message : `exit code ${run.status ?? `signal ${run.signal}`}`;
      process.stderr.write(`ensure-chromium: ${[command, ...args].join(" ")} failed (${why}).\n${howToInstall}\n`);
      return 1;
    }
  }
  if (!facts.executable(DEFAULT_CHROMIUM)) {
    process.stderr.write(`ensure-chromium: the install finished but ${DEFAULT_CHROMIUM} is still missing.\n`);
    return 1;
  }
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = ensureChromium();
}
