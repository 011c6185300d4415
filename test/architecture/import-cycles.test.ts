/**
 * One-way imports: no module of src/ may reach itself through its imports — static ones, type-only
 * ones (they say which layer depends on which just the same) and dynamic `import()`s (how the CLI
 * and the metrics endpoints load code on use: loaded later is still a dependency).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src")

const files = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return files(p)
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : []
  })

/** the relative modules a file imports (import … from, export … from, import "…", import("…")) */
export const imports = (file: string, text: string): Array<string> => {
  const out: Array<string> = []
  const statics = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/gm
  const dynamics = /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g
  for (const m of [...text.matchAll(statics), ...text.matchAll(dynamics)]) {
    const target = path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, ".ts"))
    out.push(target)
  }
  return out
}

/** every cycle found by a DFS over the import graph, each as the list of files on it */
export const findCycles = (graph: Map<string, Array<string>>): Array<Array<string>> => {
  const cycles: Array<Array<string>> = []
  const state = new Map<string, "visiting" | "done">()
  const stack: Array<string> = []
  const visit = (n: string) => {
    state.set(n, "visiting")
    stack.push(n)
    for (const m of graph.get(n) ?? []) {
      if (!graph.has(m)) continue
      if (state.get(m) === "visiting") cycles.push(stack.slice(stack.indexOf(m)).concat(m))
      else if (state.get(m) === undefined) visit(m)
    }
    stack.pop()
    state.set(n, "done")
  }
  for (const n of graph.keys()) if (state.get(n) === undefined) visit(n)
  return cycles
}

describe("imports in src/ are one-way", () => {
  it("the detector finds a planted cycle", () => {
    const g = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]]
    ])
    expect(findCycles(g)).toEqual([["a", "b", "c", "a"]])
    expect(
      imports("/x/y.ts", 'import type { A } from "./a.js"\nexport * from "../b.js"\nconst m = await import("./c.js")')
    ).toEqual(["/x/a.ts", "/b.ts", "/x/c.ts"])
  })

  it("src/ has no import cycle", () => {
    const graph = new Map<string, Array<string>>()
    for (const f of files(src)) graph.set(f, imports(f, fs.readFileSync(f, "utf8")))
    const cycles = findCycles(graph).map((c) => c.map((f) => path.relative(src, f)).join(" → "))
    expect(cycles).toEqual([])
  })
})
