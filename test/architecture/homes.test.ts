/**
 * One home per purpose (docs/architecture.md, "Where the code is"): the product's code lives in src/ (the load generator of
 * `etcd-effect bench` is src/bench/), the repository's benchmark harness in benchmarks/. The
 * harness may import the product, never the other way, and nothing else holds benchmarks.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

const files = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return files(p)
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : []
  })

describe("benchmarks have one home per purpose", () => {
  it("src/ never imports the harness in benchmarks/", () => {
    const harness = path.join(root, "benchmarks") + path.sep
    const offenders = files(path.join(root, "src")).flatMap((f) =>
      [...fs.readFileSync(f, "utf8").matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g)]
        .map((m) => path.resolve(path.dirname(f), m[1]!))
        .filter((target) => target.startsWith(harness))
        .map((target) => `${path.relative(root, f)} → ${path.relative(root, target)}`)
    )
    expect(offenders).toEqual([])
  })

  it("the only homes are src/bench/ (product) and benchmarks/ (harness)", () => {
    const top = fs.readdirSync(root).filter((n) => /bench/i.test(n) && fs.statSync(path.join(root, n)).isDirectory())
    expect(top).toEqual(["benchmarks"])
    const scripts: Record<string, string> = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).scripts
    const benchScripts = Object.entries(scripts).filter(([name]) => name.startsWith("bench:"))
    expect(benchScripts.length).toBeGreaterThan(0)
    for (const [name, command] of benchScripts)
      expect([name, command]).toEqual([name, expect.stringContaining("dist/benchmarks/")])
  })
})
