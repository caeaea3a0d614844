import { execFile } from "node:child_process";
import { cp, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The repository this file lives in (the mutants patch its src/ and examples/). */
export const REPO = resolve(fileURLToPath(new URL("../../../..", import.meta.url)));
export const MUTANTS_DIR = fileURLToPath(new URL(".", import.meta.url));

/** What the CLI gives the shrinker: enough to print a much shorter reproduction. */
export const SHRINK_TIME_MS = 2_000;

export interface Mutant {
  name: string;
  /** The patch's first line: the planted bug in words. */
  bug: string;
  patch: string;
}

/** What the shop simulator, run with its default budget on a mutated copy, said about one mutant. */
export interface MutantResult {
  name: string;
  bug: string;
  /** caught: some seed violated an invariant; missed: every seed passed; stale: the patch no longer applies; error: the run itself broke. */
  verdict: "caught" | "missed" | "stale" | "error";
  seed?: number;
  /** Steps of the catching run, and of its shrunk reproduction. */
  steps?: number;
  shrunk?: number;
  invariants?: string[];
  stalled?: boolean;
  reproduce?: string;
  /** Seeds run until the catch (or all of them). */
  seeds?: number;
  /** Wall clock of the mutant's whole check (copy, patch, simulate), ms; only printed. */
  elapsedMs: number;
  detail?: string;
}

export async function listMutants(dir = MUTANTS_DIR): Promise<Mutant[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".patch")).sort();
  return Promise.all(
    files.map(async (file) => {
      const patch = await readFile(join(dir, file), "utf8");
      return { name: file.replace(/\.patch$/, ""), bug: patch.split("\n")[0] ?? "", patch: join(dir, file) };
    }),
  );
}

/**
 * One mutant: copy src/ and examples/ (plus package.json and tsconfig.json) to a temporary
 * directory, link node_modules, `git apply` the patch there (never in the working tree), and run
 * the shop simulator's default budget, stopping at the first failing seed.
 */
export async function checkMutant(
  mutant: Mutant,
  simArgs: string[] = [],
  /**
   * Wall-clock time the simulator may spend shrinking the catching run. The verdict, the seed and
   * the invariants come from the catching run itself, never from its shrunk copy, so this only
   * shortens the printed reproduction (0: the full catching run is printed).
   */
  shrinkTimeMs = SHRINK_TIME_MS,
): Promise<MutantResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const dir = await mkdtemp(join(tmpdir(), `oncely-mutant-${mutant.name}-`));
  try {
    for (const entry of ["src", "examples", "package.json", "tsconfig.json"]) {
      await cp(join(REPO, entry), join(dir, entry), { recursive: true });
    }
    await symlink(join(REPO, "node_modules"), join(dir, "node_modules"), "dir");
    try {
      await run("git", ["apply", "--check", mutant.patch], { cwd: dir });
      await run("git", ["apply", mutant.patch], { cwd: dir });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? String(error);
      return {
        name: mutant.name,
        bug: mutant.bug,
        verdict: "stale",
        elapsedMs: elapsed(),
        detail: `patch no longer applies (refresh it, see README.md here): ${stderr.trim()}`,
      };
    }
    let stdout: string;
    try {
      ({ stdout } = await run(
        process.execPath,
        [
          "--import",
          "tsx",
          "examples/shop/sim/main.ts",
          "--json",
          "--stop-at-first-failure",
          "--shrink-time-ms",
          String(shrinkTimeMs),
          ...simArgs,
        ],
        { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      ));
    } catch (error) {
      // Exit code 1 is the simulator reporting a violation; its JSON is on stdout all the same.
      const failed = error as { stdout?: string; stderr?: string };
      if (!failed.stdout?.trim()) {
        return {
          name: mutant.name,
          bug: mutant.bug,
          verdict: "error",
          elapsedMs: elapsed(),
          detail: (failed.stderr ?? String(error)).trim().split("\n").slice(-5).join("\n"),
        };
      }
      stdout = failed.stdout;
    }
    const report = JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as {
      seeds: number;
      first?: {
        seed: number;
        invariants: string[];
        steps: number;
        shrunk?: number;
        stalled?: string;
        reproduce?: string;
        message?: string;
      };
    };
    const first = report.first;
    return {
      name: mutant.name,
      bug: mutant.bug,
      verdict: first ? "caught" : "missed",
      seeds: report.seeds,
      elapsedMs: elapsed(),
      ...(first && {
        seed: first.seed,
        steps: first.steps,
        shrunk: first.shrunk,
        invariants: first.invariants,
        stalled: first.stalled !== undefined,
        reproduce: first.reproduce,
        detail: first.message,
      }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Check every mutant, `parallel` at a time (2 by default: the simulator is single-threaded). */
export async function checkMutants(
  mutants: Mutant[],
  options: {
    parallel?: number | undefined;
    simArgs?: string[] | undefined;
    shrinkTimeMs?: number | undefined;
    onResult?: ((r: MutantResult) => void) | undefined;
  } = {},
): Promise<MutantResult[]> {
  const results: MutantResult[] = new Array(mutants.length);
  let next = 0;
  const worker = async () => {
    while (next < mutants.length) {
      const index = next++;
      const result = await checkMutant(mutants[index] as Mutant, options.simArgs, options.shrinkTimeMs);
      results[index] = result;
      options.onResult?.(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 2) }, worker));
  return results;
}

export function formatResult(r: MutantResult): string {
  const head = `${r.verdict.toUpperCase().padEnd(7)} ${r.name.padEnd(32)}`;
  const seconds = `${(r.elapsedMs / 1000).toFixed(1)} s`;
  if (r.verdict === "caught") {
    return `${head} seed ${r.seed} (${r.seeds} seeds run), ${r.steps} steps, shrunk to ${r.shrunk ?? r.steps}, ${
      r.stalled ? "as a stall, " : ""
    }by ${r.invariants?.join(", ")}; ${seconds}\n          ${r.bug}\n          reproduce (on the mutated copy): ${r.reproduce}`;
  }
  if (r.verdict === "missed") return `${head} NOT caught by ${r.seeds} seeds; ${seconds}\n          ${r.bug}`;
  return `${head} ${r.detail}; ${seconds}`;
}
