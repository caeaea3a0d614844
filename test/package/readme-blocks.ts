import { readFileSync } from "node:fs";

/** Every ```ts block of a markdown file, in order. */
export function typescriptBlocks(markdownPath: string): string[] {
  const markdown = readFileSync(markdownPath, "utf8");
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}
