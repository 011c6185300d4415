/**
 * The server-side apply oracle (test/support/ssa-oracle.ts: Kubernetes' own FieldManager) on fixed
 * cases whose answers follow from the rules of k8s.io/apimachinery's managedfields and
 * structured-merge-diff, written down here from those rules: what an update records ("." when
 * the update created the map), what an apply records (leaves and list items only), the conflict
 * Status and its causes, force, pruning of what an applier stops applying, and associative lists
 * (x-kubernetes-list-type: map) shared by two appliers. One oracle process for the file. Without
 * go it is skipped, unless REQUIRE_GO=1.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  builtinDefinitions,
  SsaOracle,
  SsaOracleError,
  type SsaRequest,
  type SsaResult,
  type SsaStep
} from "../../../support/ssa-oracle.js"
import { hasGo } from "../go-programs.js"

const definitions = builtinDefinitions()
const configMaps = { group: "", version: "v1", kind: "ConfigMap" }
const configMap = (data: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: "default", ...(labels && { labels }) },
  data
})
const apply = (manager: string, object: Record<string, unknown>, force = false): SsaStep => ({
  op: "apply",
  manager,
  object,
  force
})

/**
 * The steps, step i at second i of a fixed clock: managedFields are ordered by operation, then
 * time (seconds), then manager, and the wall clock would make that order depend on whether a
 * request crosses a second.
 */
const clocked = (steps: ReadonlyArray<SsaStep>): Array<SsaStep> =>
  steps.map((step, i) => ({ ...step, time: `2025-01-01T00:00:${String(i + 1).padStart(2, "0")}Z` }))

type Managed = { metadata: { managedFields?: Array<Record<string, unknown>> } }

/** the object with its managedFields entries' times left out */
const withoutTimes = (result: SsaResult | undefined) => {
  expect(result?.error).toBeNull()
  const object = structuredClone(result?.object) as Managed
  for (const entry of object.metadata.managedFields ?? []) delete entry["time"]
  return object
}
/** the managedFields entries' times, in order (null: the entry has none) */
const times = (result: SsaResult | undefined) =>
  ((result?.object as Managed | null)?.metadata.managedFields ?? []).map((entry) => entry["time"] ?? null)
const second = (s: number) => `2025-01-01T00:00:0${s}Z`
const entry = (manager: string, operation: "Apply" | "Update", fieldsV1: Record<string, unknown>) => ({
  manager,
  operation,
  apiVersion: "v1",
  fieldsType: "FieldsV1",
  fieldsV1
})

const run = (request: Omit<SsaRequest, "definitions"> & { readonly definitions?: SsaRequest["definitions"] }) =>
  SsaOracle.pipe(Effect.flatMap((oracle) => oracle.run({ definitions, ...request, steps: clocked(request.steps) })))

describe.skipIf(!hasGo && process.env["REQUIRE_GO"] !== "1")("ssa-oracle: Kubernetes' field manager", () => {
  // a fresh machine builds the oracle (about a minute); the layer's own budget
  layer(SsaOracle.layer, { timeout: "10 minutes" })((it) => {
    it.effect("create records one Update entry; a map the update created is owned itself ('.')", () =>
      Effect.gen(function* () {
        const { results } = yield* run({
          gvk: configMaps,
          steps: [
            { op: "create", manager: "kubectl-create", object: configMap({ a: "1" }, { app: "x" }) },
            apply("a", configMap({ a: "2" }))
          ]
        })
        // the step's time is the entry's
        expect(times(results[0])).toEqual([second(1)])
        // name and namespace (and apiVersion, kind, metadata itself) are stripped from every set
        expect(withoutTimes(results[0])).toEqual({
          ...configMap({ a: "1" }, { app: "x" }),
          metadata: {
            name: "c",
            namespace: "default",
            labels: { app: "x" },
            managedFields: [
              entry("kubectl-create", "Update", {
                "f:data": { ".": {}, "f:a": {} },
                "f:metadata": { "f:labels": { ".": {}, "f:app": {} } }
              })
            ]
          }
        })
        // an updater is named with its apiVersion in a conflict
        expect(results[1]).toEqual({
          object: null,
          error: {
            code: 409,
            reason: "Conflict",
            message: 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a',
            causes: [
              { reason: "FieldManagerConflict", message: 'conflict with "kubectl-create" using v1', field: ".data.a" }
            ]
          }
        })
      })
    )

    it.effect("a second applier changing a field conflicts (409); the same value is shared; force takes it", () =>
      Effect.gen(function* () {
        const { results } = yield* run({
          gvk: configMaps,
          steps: [
            apply("a", configMap({ x: "1" })),
            apply("b", configMap({ x: "2" })),
            apply("c", configMap({ x: "1" })),
            apply("b", configMap({ x: "2" }), true)
          ]
        })
        // an apply records leaves only: data itself is not owned
        expect(withoutTimes(results[0]).metadata.managedFields).toEqual([
          entry("a", "Apply", { "f:data": { "f:x": {} } })
        ])
        expect(results[1]).toEqual({
          object: null,
          error: {
            code: 409,
            reason: "Conflict",
            message: 'Apply failed with 1 conflict: conflict with "a": .data.x',
            causes: [{ reason: "FieldManagerConflict", message: 'conflict with "a"', field: ".data.x" }]
          }
        })
        // applying the value already there: no conflict, a and c both own it. The object did not
        // change, so c's entry gets no time (only a changing apply is stamped) and sorts first.
        expect(withoutTimes(results[2]).metadata.managedFields).toEqual([
          entry("c", "Apply", { "f:data": { "f:x": {} } }),
          entry("a", "Apply", { "f:data": { "f:x": {} } })
        ])
        expect(times(results[2])).toEqual([null, second(1)])
        // force: b owns it alone; a and c had nothing else, so their entries are gone
        expect(withoutTimes(results[3])).toEqual({
          ...configMap({ x: "2" }),
          metadata: {
            name: "c",
            namespace: "default",
            managedFields: [entry("b", "Apply", { "f:data": { "f:x": {} } })]
          }
        })
      })
    )

    it.effect("a field its applier stops applying is removed, unless another applier owns it", () =>
      Effect.gen(function* () {
        const alone = yield* run({
          gvk: configMaps,
          steps: [apply("a", configMap({ x: "1", y: "2" })), apply("a", configMap({ x: "1" }))]
        })
        expect(withoutTimes(alone.results[1])).toEqual({
          ...configMap({ x: "1" }),
          metadata: {
            name: "c",
            namespace: "default",
            managedFields: [entry("a", "Apply", { "f:data": { "f:x": {} } })]
          }
        })
        const shared = yield* run({
          gvk: configMaps,
          steps: [
            apply("a", configMap({ x: "1", y: "2" })),
            apply("b", configMap({ y: "2" })),
            apply("a", configMap({ x: "1" }))
          ]
        })
        expect(withoutTimes(shared.results[2])).toEqual({
          ...configMap({ x: "1", y: "2" }),
          metadata: {
            name: "c",
            namespace: "default",
            // Apply entries by time: b's (none: its apply changed nothing), then a's
            managedFields: [
              entry("b", "Apply", { "f:data": { "f:y": {} } }),
              entry("a", "Apply", { "f:data": { "f:x": {} } })
            ]
          }
        })
        // a's last apply did not change the object either (y stays): a's entry keeps second 1
        expect(times(shared.results[2])).toEqual([null, second(1)])
      })
    )

    it.effect("a request the oracle cannot run fails with its reason; the process serves the next one", () =>
      Effect.gen(function* () {
        const refused = yield* run({ gvk: { ...configMaps, kind: "" }, steps: [] }).pipe(Effect.flip)
        expect(refused).toBeInstanceOf(SsaOracleError)
        expect(refused.message).toBe("ssa-oracle refused the request: request: gvk needs a version and a kind")
        // an applied object of another kind than the endpoint's is the apiserver's 400; a kind the
        // definitions lack fails in the type converter (an error that is no Status)
        const nope = { ...configMaps, kind: "Nope" }
        const { results } = yield* run({
          gvk: nope,
          steps: [apply("a", configMap({})), apply("a", { ...configMap({}), kind: "Nope" })]
        })
        expect(results[0]).toEqual({
          object: null,
          error: { code: 400, reason: "BadRequest", message: "invalid object type: /v1, Kind=ConfigMap" }
        })
        expect(results[1]?.error?.code).toBeUndefined()
        expect(results[1]?.error?.message).toContain("no corresponding type for /v1, Kind=Nope")
      })
    )

    it.effect("an associative list (list-type map, key name): each applier keeps its items", () =>
      Effect.gen(function* () {
        const widget = (items: ReadonlyArray<string>) => ({
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: "w" },
          spec: { items: items.map((name) => ({ name, value: name.toUpperCase() })) }
        })
        const item = (name: string) => ({ [`k:{"name":"${name}"}`]: { ".": {}, "f:name": {}, "f:value": {} } })
        const owns = (manager: string, ...names: Array<string>) => ({
          ...entry(manager, "Apply", { "f:spec": { "f:items": Object.assign({}, ...names.map(item)) } }),
          apiVersion: "example.com/v1"
        })
        const { results } = yield* run({
          definitions: { ...definitions, "com.example.v1.Widget": widgetDefinition },
          gvk: { group: "example.com", version: "v1", kind: "Widget" },
          steps: [apply("a", widget(["a1"])), apply("b", widget(["b1"])), apply("a", widget(["a1", "a2"]))]
        })
        // a list item is owned itself ('.') as well as its fields
        expect(withoutTimes(results[1])).toEqual({
          ...widget(["a1", "b1"]),
          metadata: { name: "w", managedFields: [owns("a", "a1"), owns("b", "b1")] }
        })
        // merged order: the live items not in the applied list keep their place before the new
        // ones; the entries by time: b's (second 2) before a's (second 3)
        expect(withoutTimes(results[2])).toEqual({
          ...widget(["a1", "b1", "a2"]),
          metadata: { name: "w", managedFields: [owns("b", "b1"), owns("a", "a1", "a2")] }
        })
        expect(times(results[2])).toEqual([second(2), second(3)])
      })
    )
  })
})

/** a CRD's structural schema as the apiserver publishes it: spec.items a list of map keyed by name */
const widgetDefinition = {
  type: "object",
  "x-kubernetes-group-version-kind": [{ group: "example.com", version: "v1", kind: "Widget" }],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" },
    spec: {
      type: "object",
      properties: {
        items: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, value: { type: "string" } }
          }
        }
      }
    }
  }
}
