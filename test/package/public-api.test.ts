/**
 * The package's root export is exactly the checked-in list in public-api.txt: every name a user can
 * reach from `etcd-effect` (namespaces walked, `type` marks names with no value). An internal that
 * leaks through an index (as `export *` once let `Watch.WatchStreamImpl` out), or a public name that
 * disappears, fails here. After a deliberate change of the API, rewrite the list with
 * `UPDATE_PUBLIC_API=1 npx vitest run test/package/public-api.test.ts` and review its diff.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const listFile = path.join(root, "test/package/public-api.txt")

const entries = {
  root: path.join(root, "src/index.ts"),
  proto: path.join(root, "src/proto/index.ts"),
  bench: path.join(root, "src/bench/index.ts")
}
const protoListFile = path.join(root, "test/package/public-api-proto.txt")

/** every exported name of each entry module, namespaces (`export * as X`) walked, as sorted lines */
export const exportedNames = (files: ReadonlyArray<string>): Array<Array<string>> => {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true
  })
  const checker = program.getTypeChecker()
  const walk = (out: Array<string>, module: ts.Symbol, prefix: string) => {
    for (const s of checker.getExportsOfModule(module)) {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s
      const name = prefix + s.name
      if (target.flags & ts.SymbolFlags.ValueModule && target.declarations?.some(ts.isSourceFile)) {
        out.push(`namespace ${name}`)
        walk(out, target, `${name}.`)
      } else out.push(target.flags & ts.SymbolFlags.Value ? name : `type ${name}`)
    }
  }
  const key = (l: string) => l.replace(/^(type|namespace) /, "")
  return files.map((file) => {
    const sf = program.getSourceFile(file)
    if (sf === undefined) throw new Error(`cannot read ${file}`)
    const out: Array<string> = []
    walk(out, checker.getSymbolAtLocation(sf)!, "")
    return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
  })
}

// one program for both entries: building it is most of this file's time
let cached: Array<Array<string>> | undefined
const names = () => (cached ??= exportedNames([entries.root, entries.proto, entries.bench]))

/** the list in `file`, rewritten from `actual` first when UPDATE_PUBLIC_API=1 */
const checkedIn = (file: string, actual: ReadonlyArray<string>) => {
  if (process.env["UPDATE_PUBLIC_API"] === "1") fs.writeFileSync(file, actual.join("\n") + "\n")
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
}

describe("the package's public API", () => {
  it("the root export is exactly the checked-in list", () => {
    const [rootNames] = names()
    expect(rootNames).toEqual(checkedIn(listFile, rootNames!))
  }, 120_000)

  it("internals, the protos and the load generator stay out of it", () => {
    const names = fs.readFileSync(listFile, "utf8").split("\n")
    expect(names).toContain("Watch.WatchableStore")
    // what a user composes is public; the parts inside (issue 30: these once leaked) are not
    const internal =
      /Impl\b|^namespace (Bench|Proto)\b|^(type )?(Bench|Proto)\.|serverWatchStream|^Watch\.make$|PendingWrite|supervised|Etcd2\.(translate|etcdWatch|parseResponse|makeSendResult|statusOfError)$|BUF_SIZE|^Kubernetes\.CacherInternals$/
    expect(names.filter((n) => internal.test(n))).toEqual([])
  })

  it("the protos are the subpath etcd-effect/proto, exactly the checked-in list", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
    expect(manifest.exports["./proto"]).toEqual({
      types: "./dist/src/proto/index.d.ts",
      default: "./dist/src/proto/index.js"
    })
    const protoNames = names()[1]!
    expect(protoNames).toEqual(checkedIn(protoListFile, protoNames))
    expect(protoNames).toEqual(expect.arrayContaining(["packageDefinition", "etcdserverpb"]))
  }, 120_000)

  it("the load generator is the subpath etcd-effect/bench", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
    expect(manifest.exports["./bench"]).toEqual({
      types: "./dist/src/bench/index.d.ts",
      default: "./dist/src/bench/index.js"
    })
    expect(names()[2]).toEqual(expect.arrayContaining(["run", "openIdleWatchers", "type BenchResult"]))
  }, 120_000)
})
