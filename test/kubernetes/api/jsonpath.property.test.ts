/**
 * client-go's JSONPath and the CRD table convertor against Kubernetes' own (the Go oracle,
 * test/support/printer-columns-oracle.ts): random custom resources and random paths — fields,
 * `['key']`, indices (negative and out of range), slices, `[*]`, unions, `..`, `.*` and filters
 * with every operator on strings, integers, floats, booleans and null — evaluated as a printer
 * column of each type and as a `kubectl -o jsonpath` template. Cells, results, errors and the
 * printed text must be Kubernetes'. Go's map iteration is random, so where a path walks a map's
 * values (`.*`, `..`) results are compared as multisets and the first value only when all agree.
 * Without go it is skipped, unless REQUIRE_GO=1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FastCheck as fc } from "effect"
import { goMarshalSorted } from "../../../src/kubernetes/api/go-json.js"
import { compileJsonPath, executeJsonPath, findResults } from "../../../src/kubernetes/api/jsonpath.js"
import { parseJsonPath } from "../../../src/kubernetes/api/jsonpath-parser.js"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import { customResourceCells } from "../../../src/kubernetes/apiserver/table.js"
import { type PrinterColumnsOracle, startPrinterColumnsOracle } from "../../support/printer-columns-oracle.js"
import { hasGo } from "../apiserver/go-programs.js"

const KEYS = ["a", "b", "type", "status", "n"] as const
const key = fc.constantFrom(...KEYS)
const scalar = fc.oneof(
  fc.constantFrom("Ready", "True", "False", "x", "<y>", "", "a b"),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(1.5, -0.25, 1234567.5, 1.5e-7, 0.001),
  fc.boolean(),
  fc.constant(null)
)
const { value } = fc.letrec<{ value: unknown; object: Record<string, unknown>; array: unknown[] }>((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("object"), tie("array")),
  object: fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  array: fc.array(tie("value"), { maxLength: 4 })
}))
const condition = fc.record(
  { type: fc.constantFrom("Ready", "Synced", "Other"), status: fc.constantFrom("True", "False", "Unknown") },
  { requiredKeys: ["type"] }
)
const object = fc.record({
  spec: fc.dictionary(key, value, { maxKeys: 4 }),
  status: fc.record({ conditions: fc.array(condition, { maxLength: 3 }) }, { requiredKeys: [] })
})

const literal = fc.oneof(fc.constantFrom('"Ready"', "'True'", '"x"', '"<y>"', "1", "-1", "0", "1.5", "true", "false"))
const operator = fc.constantFrom("==", "!=", "<", ">", "<=", ">=")
const segment: fc.Arbitrary<string> = fc.oneof(
  key.map((k) => `.${k}`),
  key.map((k) => `['${k}']`),
  fc.integer({ min: -3, max: 3 }).map((i) => `[${i}]`),
  fc.constant("[*]"),
  fc.tuple(fc.integer({ min: -2, max: 3 }), fc.integer({ min: -2, max: 4 })).map(([a, b]) => `[${a}:${b}]`),
  fc.constantFrom("[0,1]", "[1:]", "[::2]", "[0:3:0]"),
  key.map((k) => `..${k}`),
  fc.constant(".*"),
  fc
    .tuple(key, operator, literal, fc.boolean())
    .map(([k, op, lit, spaced]) => (spaced ? `[?(@.${k} ${op} ${lit})]` : `[?(@.${k}${op}${lit})]`)),
  key.map((k) => `[?(@.${k})]`)
)
const jsonPath = fc.oneof(
  fc
    .tuple(fc.constantFrom(".spec", ".status.conditions", ".status", ""), fc.array(segment, { maxLength: 3 }))
    .map(([root, segs]) => `${root}${segs.join("")}` || "."),
  fc.constantFrom(
    '.status.conditions[?(@.type=="Ready")].status',
    ".status.conditions[*].type",
    ".status.conditions[-1:].status",
    ".spec.a[*].b",
    "..type",
    ".spec.a[?(@.b)]"
  )
)
const columnType = fc.constantFrom("string", "integer", "number", "boolean")

/** a path that walks a map's values: Go visits them in random order */
const unordered = (path: string) => path.includes("..") || path.includes(".*")
const sorted = (vs: ReadonlyArray<unknown>) => vs.map((v) => goMarshalSorted(v)).sort()
/** Go's JSON of the results, read back as ours are: numbers as numbers */
const normal = (u: unknown): unknown => JSON.parse(JSON.stringify(u)) as unknown

const ours = (template: string, obj: unknown) => {
  try {
    return { results: findResults(compileJsonPath(template), obj).map((r) => r.map(normal)) }
  } catch (e) {
    return { error: (e as Error).message }
  }
}

describe.skipIf(!hasGo)("JSONPath against client-go", () => {
  let oracle: PrinterColumnsOracle
  beforeAll(async () => {
    oracle = await startPrinterColumnsOracle()
  }, 600_000)
  afterAll(() => oracle?.close())

  it("printer column cells and -o jsonpath results are Kubernetes'", async () => {
    await fc.assert(
      fc.asyncProperty(
        object,
        fc.array(fc.tuple(jsonPath, columnType), { minLength: 1, maxLength: 3 }),
        async (obj, cols) => {
          const columns = cols.map(([p, type], i) => ({ name: `c${i}`, type, jsonPath: p }))
          const template = `{${cols[0]![0]}} x{${cols.at(-1)![0]}}`
          const go = await oracle.ask({ columns, object: obj, template })
          const cells = customResourceCells(columns, obj as unknown as KubeObject)
          const anyUnordered = cols.some(([p]) => unordered(p))
          const mine = ours(template, obj)
          if (!anyUnordered) {
            expect(cells).toEqual(go.cells)
            expect(mine.error !== undefined).toBe(go.error !== undefined)
            if (mine.error === undefined) expect(mine.results).toEqual(go.results)
            if (go.textError === undefined) expect(executeJsonPath(compileJsonPath(template), obj)).toBe(go.text)
          } else {
            expect(cells.length).toBe(go.cells?.length)
            if (mine.error === undefined && go.error === undefined)
              expect([template, mine.results!.map(sorted)]).toEqual([template, go.results!.map(sorted)])
          }
        }
      ),
      { numRuns: 400 }
    )
  }, 600_000)

  it("parses what client-go parses, and refuses what it refuses", async () => {
    const cases = [
      "{.a[?(@.b=='x)]}",
      "{.a[}",
      "{.a",
      "{.a[x]}",
      "{..}",
      "{....a}",
      "{.a}{.b",
      "{#}",
      "{.a[1:2:3:4]}",
      "{range .a[*]}{.b}{end}",
      "{.a-b}",
      "{'quoted'}",
      '{.a[?(@.b=="x\\"y")]}',
      "text only",
      "{.a\\.b}",
      "{1.2.3}"
    ]
    for (const template of cases) {
      const go = await oracle.ask({ columns: [], object: { a: [{ b: "x" }], "a.b": 1 }, template })
      let parseError: string | undefined
      try {
        parseJsonPath(template)
      } catch (e) {
        parseError = (e as Error).message
      }
      expect([template, parseError]).toEqual([template, go.parseError])
    }
  }, 600_000)
})
