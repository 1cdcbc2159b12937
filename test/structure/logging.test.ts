import { readFileSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const LOG_HELPER = "edge/lib/log.ts";

/** Product source: TypeScript and the console's browser script, without generated declarations. */
function productFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : productFiles(path);
    return /\.(?:tsx?|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [relative(ROOT, join(ROOT, path))] : [];
  });
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** `console.error(JSON.stringify({ … }))`, over one line or several. */
const HAND_BUILT_LINE = /console\.(?:log|info|warn|error|debug)\(\s*JSON\.stringify\(/g;

function handBuiltLogLines(text: string): number[] {
  return [...text.matchAll(HAND_BUILT_LINE)].map((match) => lineOf(text, match.index));
}

/** A handler that never looks at the error: `.catch(() => …)`, `.catch(async () => …)`, `.catch((_error) => …)`. */
const ERROR_IGNORED = /\.catch\(\s*(?:async\s*)?(?:\(\s*\)|\(\s*_\w*\s*\)|_\w*)\s*=>/g;

/** The handler's text: from the match to the parenthesis that closes `.catch(`. */
function handlerAt(text: string, start: number): string {
  let depth = 0;
  for (let index = text.indexOf("(", start); index < text.length; index++) {
    if (text[index] === "(") depth++;
    if (text[index] === ")" && --depth === 0) return text.slice(start, index + 1);
  }
  return text.slice(start);
}

const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*)/;
const TRAILING_COMMENT = /(?:^|\s)(?:\/\/|\/\*)/;

/**
 * Lines where a caught error is dropped (neither thrown on nor looked at) with no comment on
 * the line or the line above saying why that is safe. One comment may cover a run of such lines.
 */
function unexplainedSwallows(text: string): number[] {
  const lines = text.split("\n");
  const swallowed = new Set<number>();
  for (const match of text.matchAll(ERROR_IGNORED)) {
    if (!/\bthrow\b/.test(handlerAt(text, match.index))) swallowed.add(lineOf(text, match.index));
  }
  const commentAbove = (line: number): boolean => COMMENT_LINE.test(lines[line - 2] ?? "") || (swallowed.has(line - 1) && commentAbove(line - 1));
  const commentOn = (line: number): boolean => TRAILING_COMMENT.test(lines[line - 1]!.replace(/(["'`])(?:\\.|(?!\1).)*\1/g, '""'));
  return [...swallowed].filter((line) => !commentOn(line) && !commentAbove(line)).sort((a, b) => a - b);
}

describe("edge logs", () => {
  it(`are written through ${LOG_HELPER}, never as JSON built by hand`, () => {
    const files = productFiles("edge");
    expect(files).toContain(LOG_HELPER);
    const byHand = files.filter((file) => file !== LOG_HELPER).flatMap((file) => handBuiltLogLines(readFileSync(join(ROOT, file), "utf8")).map((line) => `${file}:${line}`));
    expect(byHand).toEqual([]);
  });

  it("recognises a hand-built line, over one line or several, and not other uses of JSON", () => {
    expect(handBuiltLogLines('console.error(JSON.stringify({ msg: "x" }));')).toEqual([1]);
    expect(handBuiltLogLines('a();\nconsole.log(\n  JSON.stringify({ msg: "sweep", deleted })\n);')).toEqual([2]);
    expect(handBuiltLogLines('log.error("x", { body: JSON.stringify(body) });\nreturn new Response(JSON.stringify(problem));\nconsole.log(task.outputs);')).toEqual([]);
  });
});

describe("swallowed errors", () => {
  it("in edge/ and transcoder/ each say why swallowing is safe", () => {
    const files = [...productFiles("edge"), ...productFiles("transcoder")];
    expect(files.length).toBeGreaterThan(100);
    const unexplained = files.flatMap((file) => unexplainedSwallows(readFileSync(join(ROOT, file), "utf8")).map((line) => `${file}:${line}`));
    expect(unexplained).toEqual([]);
  });

  it("finds handlers that ignore the error, and accepts a comment on the line, above it, or above a run of them", () => {
    const source = [
      "await body.cancel().catch(() => {});", // 1: unexplained
      "// The client has gone; nothing to tell.",
      "await writer.close().catch(() => {});", // 3: comment above
      "await reader.cancel().catch(async () => undefined);", // 4: covered by the run above
      "const parsed = schema.safeParse(json);",
      "const text = await response.text().catch(() => \"\"); // only a detail for the log",
      "const json = await c.req.json().catch((_error) => undefined);", // 7: a comment at the end of the line above covers only that line
      "const url = \"http://x\"; work.catch(() => null);", // 8: a URL is not a comment
      "const grant = await verify(token).catch(() => {",
      "  throw new AppError(\"UNAUTHORIZED\", \"bad token\");", // mapped to an answer, not swallowed
      "});",
      "work.catch((error) => log.error(\"work failed\", { error }));", // looked at
      "promise.catch(reject);",
    ].join("\n");
    expect(unexplainedSwallows(source)).toEqual([1, 7, 8]);
  });
});
