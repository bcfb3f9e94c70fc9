import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../../src");
const ROOT = path.dirname(SRC);

/**
 * Pairs of folders allowed to import each other, each with what it waits for: none, and it stays empty (a layer
 * that needs the one above it is a folder in the wrong place). Were one ever listed, the test would fail once it
 * no longer occurs, so the list cannot go stale.
 */
const KNOWN_PAIRS = new Map<string, string>([]);

/** The local modules a file imports: static imports (type-only too), `export … from`, `import()`, `declare module`. */
function importsOf(file: string, text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((n) => n.startsWith("."))
    .map((n) => path.resolve(path.dirname(file), n.replace(/\.js$/, ".ts")));
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sourceFiles(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

const inScope = (p: string) => !path.relative(SRC, p).startsWith("..") && !path.relative(SRC, p).split(path.sep).includes("generated");
const rel = (p: string) => path.relative(ROOT, p);

/**
 * Folder → folder it imports → the imports that make that edge ("nodes/lifecycle.ts → links/capture.ts"). A folder
 * is a directory, so a parent and its child are two folders: the parent composing its children while a child
 * reaches back up into the parent is a pair too.
 */
function folderGraph(files: Map<string, string>): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const [file, text] of files) {
    const from = path.dirname(file);
    for (const target of importsOf(file, text)) {
      const to = path.dirname(target);
      if (to === from || !inScope(target)) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      const edges = graph.get(from)!;
      const why = `${path.relative(path.dirname(from), file)} → ${path.relative(path.dirname(to), target)}`;
      edges.set(to, [...new Set([...(edges.get(to) ?? []), why])]);
    }
  }
  return graph;
}

/** Every pair of folders that import each other, as "a ↔ b" with the imports each way. */
function mutualPairs(graph: Map<string, Map<string, string[]>>): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const [a, edges] of graph) {
    for (const [b, aToB] of edges) {
      const bToA = graph.get(b)?.get(a);
      if (a < b && bToA) pairs.set(`${rel(a)} ↔ ${rel(b)}`, `${aToB.join(", ")} | ${bToA.join(", ")}`);
    }
  }
  return pairs;
}

const sources = () => new Map(sourceFiles(SRC).map((f) => [f, fs.readFileSync(f, "utf8")]));

describe("unit: folder dependencies", () => {
  it("finds folders that import each other, by any form of import, parent and child included", () => {
    const files = new Map([
      [`${SRC}/a/one.ts`, `import type { B } from "../b/two.js";`],
      [`${SRC}/b/two.ts`, `export { one } from "../a/one.js";`],
      [`${SRC}/c/three.ts`, `const m = await import("../d/four.js");`],
      [`${SRC}/d/four.ts`, `import "../c/three.js";`],
      [`${SRC}/e/five.ts`, `import { x } from "./sub/six.js";`],
      [`${SRC}/e/sub/six.ts`, `export type Six = 6;\ndeclare module "../five.js" {\n  interface X {}\n}`],
      [`${SRC}/f/seven.ts`, `import { a } from "../a/one.js"; import { z } from "./eight.js";`],
      [`${SRC}/f/eight.ts`, `import { G } from "../generated/client.js";`],
    ]);
    expect([...mutualPairs(folderGraph(files))]).toEqual([
      ["src/a ↔ src/b", "a/one.ts → b/two.ts | b/two.ts → a/one.ts"],
      ["src/c ↔ src/d", "c/three.ts → d/four.ts | d/four.ts → c/three.ts"],
      ["src/e ↔ src/e/sub", "e/five.ts → sub/six.ts | sub/six.ts → e/five.ts"],
    ]);
  });

  // A folder either builds on another or is built on by it. When both import each other, move the code to where it
  // belongs: a parent's module its children share goes into a child folder of its own (platform/core,
  // emulation/core), a helper two folders share goes down to the lower one, a type goes where its importers can
  // reach it without a loop. Hiding an import (a callback, a string, ctx) does not make the dependency go away.
  it("no two folders under src import each other", () => {
    const pairs = mutualPairs(folderGraph(sources()));
    const unexpected = [...pairs].filter(([pair]) => !KNOWN_PAIRS.has(pair)).map(([pair, imports]) => `${pair}: ${imports}`);
    expect(unexpected).toEqual([]);
  });

  it("every known pair still occurs (remove the ones that are solved)", () => {
    const pairs = mutualPairs(folderGraph(sources()));
    expect([...KNOWN_PAIRS.keys()].filter((pair) => !pairs.has(pair))).toEqual([]);
  });
});
