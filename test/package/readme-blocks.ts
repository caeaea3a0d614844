import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Every ```ts block of a markdown file, in order. */
export function typescriptBlocks(markdownPath: string): string[] {
  const markdown = readFileSync(markdownPath, "utf8");
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}

/** A documented TypeScript block: the file it becomes in the consumer project, and its code. */
export interface DocumentedBlock {
  file: string;
  code: string;
}

/**
 * The markdown files whose ```ts blocks are a user's program: the README first (its first block is the quick
 * start, run as `readme-1`), then every file under docs/ in path order, then the shop's README.
 */
export function documentedMarkdown(repo: string): string[] {
  const docs = readdirSync(join(repo, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join("docs", f));
  return ["README.md", ...docs, join("examples", "shop", "README.md")];
}

/** Every ```ts block of the documented markdown, each named after its file: `readme-1.ts`, `docs-guide-effects-2.ts`. */
export function documentedBlocks(repo: string): DocumentedBlock[] {
  return documentedMarkdown(repo).flatMap((path) => {
    const stem =
      path === "README.md"
        ? "readme"
        : path
            .replace(/\.md$/, "")
            .replace(/[^A-Za-z0-9]+/g, "-")
            .toLowerCase();
    return typescriptBlocks(join(repo, path)).map((code, i) => ({ file: `${stem}-${i + 1}.ts`, code }));
  });
}
