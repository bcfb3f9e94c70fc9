import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../../src");

/** Every module under src (generated Prisma clients excepted) and the local modules it imports, type-only too. */
function importGraph(): Map<string, string[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "generated") walk(p);
      } else if (p.endsWith(".ts")) files.push(p);
    }
  };
  walk(SRC);
  const known = new Set(files);
  return new Map(
    files.map((f) => {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(f, "utf8"), true, true);
      const local = importedFiles
        .map((i) => i.fileName)
        .filter((n) => n.startsWith("."))
        .map((n) => path.resolve(path.dirname(f), n.replace(/\.js$/, ".ts")))
        .filter((p) => known.has(p));
      return [f, local];
    }),
  );
}

/** Strongly connected components with more than one module (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.map((p) => path.relative(SRC, p)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("unit: module structure", () => {
  it("finds a cycle when there is one", () => {
    const graph = new Map([
      [`${SRC}/a.ts`, [`${SRC}/b.ts`]],
      [`${SRC}/b.ts`, [`${SRC}/a.ts`]],
      [`${SRC}/c.ts`, [`${SRC}/a.ts`]],
    ]);
    expect(cycles(graph)).toEqual([["a.ts", "b.ts"]]);
  });

  // Modules of one resource folder may lean on each other; across folders a cycle means two resources know each
  // other's insides (as nodes ↔ placement ↔ runtime did): depend on the context or on events instead.
  it("no import cycle spans two folders", () => {
    const acrossFolders = cycles(importGraph()).filter((c) => new Set(c.map((p) => path.dirname(p))).size > 1);
    expect(acrossFolders).toEqual([]);
  });
});
