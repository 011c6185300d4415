/**
 * docs/architecture.md's Layer graph (the mermaid block between the `layer-graph` markers) is the
 * source's: every exported `Layer` of src/ (a const, a function returning one, or a static member of
 * a Tag class), the services it provides and the services it requires, read from its declared type
 * `Layer.Layer<Provides, E, Requires>`. A Layer added, removed or re-wired without the doc fails
 * here. To redraw the block after such a change:
 * `UPDATE_LAYER_GRAPH=1 npx vitest run test/architecture/layer-graph.test.ts`, then review the diff.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const src = path.join(root, "src")
const doc = path.join(root, "docs/architecture.md")
const BEGIN = "<!-- layer-graph:begin (test/architecture/layer-graph.test.ts) -->"
const END = "<!-- layer-graph:end -->"

/** one Layer: where it is declared (`watch/watchable-store.ts: layer`), what it provides and requires */
export interface LayerNode {
  readonly name: string
  readonly provides: ReadonlyArray<string>
  readonly requires: ReadonlyArray<string>
}

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return sourceFiles(p)
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : []
  })

/** the Layers declared in src/, from the types the compiler gives their exported declarations */
export const layersInSource = (): Array<LayerNode> => {
  const files = sourceFiles(src)
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true
  })
  const checker = program.getTypeChecker()
  /** Layer<ROut, E, RIn> → [ROut, RIn] as service names; undefined for any other type */
  const layerOf = (type: ts.Type): [Array<string>, Array<string>] | undefined => {
    const signatures = type.getCallSignatures()
    if (signatures.length > 0) return layerOf(checker.getReturnTypeOfSignature(signatures[0]!))
    if (type.symbol?.name !== "Layer" || !(type.flags & ts.TypeFlags.Object)) return undefined
    const args = checker.getTypeArguments(type as ts.TypeReference)
    if (args.length !== 3) return undefined
    const names = (t: ts.Type): Array<string> =>
      t.flags & ts.TypeFlags.Never
        ? []
        : t.isUnion()
          ? t.types.flatMap(names)
          : [t.symbol?.name ?? checker.typeToString(t)]
    return [names(args[0]!).sort(), names(args[2]!).sort()]
  }
  const out: Array<LayerNode> = []
  for (const file of files) {
    const sf = program.getSourceFile(file)!
    const where = path.relative(src, file).split(path.sep).join("/")
    const add = (name: string, node: ts.Node) => {
      const layer = layerOf(checker.getTypeAtLocation(node))
      if (layer !== undefined) out.push({ name: `${where}: ${name}`, provides: layer[0], requires: layer[1] })
    }
    const exported = (n: ts.Node) => ts.getCombinedModifierFlags(n as ts.Declaration) & ts.ModifierFlags.Export
    for (const statement of sf.statements) {
      if (ts.isVariableStatement(statement) && exported(statement)) {
        for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) add(d.name.text, d.name)
      } else if (ts.isClassDeclaration(statement) && statement.name !== undefined && exported(statement)) {
        for (const m of statement.members) {
          const isStatic = ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static
          if (isStatic && ts.isPropertyDeclaration(m) && ts.isIdentifier(m.name))
            add(`${statement.name.text}.${m.name.text}`, m.name)
        }
      }
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1))
}

/** the mermaid text for these Layers: a box per Layer, a stadium per service, `-->` provides, `-.->` requires */
export const renderGraph = (layers: ReadonlyArray<LayerNode>): string => {
  const services = [...new Set(layers.flatMap((l) => [...l.provides, ...l.requires]))].sort()
  const sid = (s: string) => `s_${s}`
  const lines = ["```mermaid", "flowchart LR"]
  for (const s of services) lines.push(`  ${sid(s)}(["${s}"])`)
  layers.forEach((l, i) => {
    lines.push(`  l${i}["${l.name}"]`)
    for (const p of l.provides) lines.push(`  l${i} --> ${sid(p)}`)
    for (const r of l.requires) lines.push(`  ${sid(r)} -.-> l${i}`)
  })
  lines.push("```")
  return lines.join("\n")
}

/** the Layers a mermaid block of that shape draws (ids are free; labels and edges are what count) */
export const parseGraph = (mermaid: string): Array<LayerNode> => {
  const labels = new Map<string, string>()
  const layerIds = new Set<string>()
  for (const m of mermaid.matchAll(/^\s*(\w+)\(\["([^"]+)"\]\)/gm)) labels.set(m[1]!, m[2]!)
  for (const m of mermaid.matchAll(/^\s*(\w+)\["([^"]+)"\]/gm)) {
    labels.set(m[1]!, m[2]!)
    layerIds.add(m[1]!)
  }
  const nodes = new Map(
    [...layerIds].map((id) => [id, { provides: [] as Array<string>, requires: [] as Array<string> }])
  )
  for (const m of mermaid.matchAll(/^\s*(\w+)\s*(-->|-\.->)\s*(\w+)\s*$/gm)) {
    const [, from, arrow, to] = m
    if (arrow === "-->") nodes.get(from!)?.provides.push(labels.get(to!) ?? `?${to}`)
    else nodes.get(to!)?.requires.push(labels.get(from!) ?? `?${from}`)
  }
  return [...nodes]
    .map(([id, n]) => ({ name: labels.get(id)!, provides: n.provides.sort(), requires: n.requires.sort() }))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
}

const docBlock = (text: string): string => {
  const from = text.indexOf(BEGIN)
  const to = text.indexOf(END)
  if (from < 0 || to < from) throw new Error(`docs/architecture.md has no ${BEGIN} … ${END} block`)
  return text.slice(from + BEGIN.length, to)
}

describe("docs/architecture.md's Layer graph", () => {
  it("reads back what it draws", () => {
    const layers: Array<LayerNode> = [
      { name: "a.ts: layer", provides: ["A"], requires: ["B", "C"] },
      { name: "b.ts: B.layer", provides: ["B"], requires: [] }
    ]
    expect(parseGraph(renderGraph(layers))).toEqual(layers)
  })

  it("is every Layer of src/ with what it provides and requires", () => {
    const layers = layersInSource()
    // the store's stack is always there: a broken extraction cannot pass as an empty graph
    expect(layers).toContainEqual({
      name: "mvcc/kvstore.ts: layer",
      provides: ["MvccStore"],
      requires: ["Backend", "KvStoreConfig"]
    })
    const text = fs.readFileSync(doc, "utf8")
    if (process.env["UPDATE_LAYER_GRAPH"] === "1") {
      const block = docBlock(text)
      fs.writeFileSync(doc, text.replace(`${BEGIN}${block}${END}`, `${BEGIN}\n${renderGraph(layers)}\n${END}`))
    }
    expect(parseGraph(docBlock(fs.readFileSync(doc, "utf8")))).toEqual(layers)
  }, 180_000)
})
