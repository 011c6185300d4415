/**
 * Our FieldManager against Kubernetes' own (the Go oracle, test/support/ssa-oracle.ts): random
 * sequences of creates, updates and applies by three managers, forced or not, on a ConfigMap
 * (granular maps, metadata's set and map lists) and on a custom type with every merge rule
 * (scalars, granular and atomic maps, set, map-keyed and atomic lists, a status the main resource
 * may not own). Each step's result — the object with its managedFields (times from a fixed
 * clock, so their order is checked too), or the error's code, message and causes — must be
 * Kubernetes'. Without go it is skipped, unless REQUIRE_GO=1.
 */
import { describe, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, Runtime } from "effect"
import { ApplyBadRequest, ApplyConflict } from "../../../src/kubernetes/managedfields/apply-errors.js"
import * as FM from "../../../src/kubernetes/managedfields/field-manager.js"
import { FieldSet } from "../../../src/kubernetes/managedfields/field-set.js"
import { fromOpenApi, type OpenApiSchema } from "../../../src/kubernetes/managedfields/openapi-schema.js"
import {
  builtinDefinitions,
  SsaOracle,
  type SsaRequest,
  type SsaResult,
  type SsaStep
} from "../../support/ssa-oracle.js"
import { hasGo } from "../apiserver/go-programs.js"

const definitions = builtinDefinitions() as Record<string, OpenApiSchema>
const META = { $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }
const widget: OpenApiSchema = {
  type: "object",
  "x-kubernetes-group-version-kind": [{ group: "ex.com", version: "v1", kind: "W" }],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: META,
    spec: {
      type: "object",
      properties: {
        a: { type: "string" },
        m: { type: "object", additionalProperties: { type: "string" } },
        atomicObj: {
          type: "object",
          "x-kubernetes-map-type": "atomic",
          properties: { p: { type: "string" }, q: { type: "string" } }
        },
        set: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
        atomicList: { type: "array", items: { type: "string" } },
        items: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              v: { type: "integer" },
              tags: { type: "array", items: { type: "string" } }
            }
          }
        }
      }
    },
    status: { type: "object", properties: { phase: { type: "string" } } }
  }
}
const widgetDefinitions = { ...definitions, "ex.com.v1.W": widget }

interface Kind {
  readonly definitions: Record<string, OpenApiSchema>
  readonly gvk: { group: string; version: string; kind: string }
  readonly type: string
  readonly apiVersion: string
  readonly reset?: FieldSet
  readonly body: fc.Arbitrary<Record<string, unknown>>
}

const key = fc.constantFrom("x", "y", "z")
const word = fc.constantFrom("1", "2")
const strMap = fc.dictionary(key, word, { maxKeys: 3 })
const metaExtras = fc.record(
  {
    labels: strMap,
    annotations: strMap,
    finalizers: fc.uniqueArray(fc.constantFrom("f/a", "f/b", "f/c"), { maxLength: 3 }),
    // a stored object has a uid: an untracked one (managedFields reset) is not tracked on update
    uid: fc.constant("u1")
  },
  { requiredKeys: [] }
)

const configMap: Kind = {
  definitions,
  gvk: { group: "", version: "v1", kind: "ConfigMap" },
  type: "io.k8s.api.core.v1.ConfigMap",
  apiVersion: "v1",
  body: fc
    .record(
      {
        data: strMap,
        binaryData: fc.dictionary(key, fc.constant("MQ=="), { maxKeys: 1 }),
        immutable: fc.boolean(),
        metadata: metaExtras
      },
      { requiredKeys: ["metadata"] }
    )
    .map((o) => ({ apiVersion: "v1", kind: "ConfigMap", ...o, metadata: { name: "c", namespace: "d", ...o.metadata } }))
}

const widgets: Kind = {
  definitions: widgetDefinitions,
  gvk: { group: "ex.com", version: "v1", kind: "W" },
  type: "ex.com.v1.W",
  apiVersion: "ex.com/v1",
  reset: FieldSet.fields(["status"]),
  body: fc
    .record(
      {
        metadata: metaExtras,
        spec: fc.record(
          {
            a: word,
            m: strMap,
            atomicObj: fc.record({ p: word, q: word }, { requiredKeys: [] }),
            set: fc.uniqueArray(key, { maxLength: 3 }),
            atomicList: fc.array(key, { maxLength: 2 }),
            items: fc.uniqueArray(
              fc.record(
                { name: key, v: fc.integer({ min: 0, max: 2 }), tags: fc.array(word, { maxLength: 2 }) },
                { requiredKeys: ["name"] }
              ),
              { selector: (i) => i.name, maxLength: 3 }
            )
          },
          { requiredKeys: [] }
        ),
        status: fc.record({ phase: word }, { requiredKeys: [] })
      },
      { requiredKeys: ["metadata"] }
    )
    .map((o) => ({ apiVersion: "ex.com/v1", kind: "W", ...o, metadata: { name: "w", ...o.metadata } }))
}

const steps = (k: Kind): fc.Arbitrary<Array<SsaStep>> =>
  fc
    .tuple(
      fc.boolean(),
      fc.array(
        fc.record({
          op: fc.constantFrom("update" as const, "apply" as const, "apply" as const),
          manager: fc.oneof(
            fc.constantFrom("a", "b", "c"),
            fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `m${i}`))
          ),
          object: k.body,
          force: fc.boolean(),
          keepManaged: fc.constantFrom("keep" as const, "none" as const, "reset" as const)
        }),
        { minLength: 1, maxLength: 14 }
      )
    )
    .map(([createFirst, rest]) =>
      rest.map((s, i) => ({
        op: i === 0 && createFirst ? ("create" as const) : s.op,
        manager: s.manager,
        object: s.object,
        force: s.op === "apply" ? s.force : false,
        // two steps a second: entries of one second are ordered by manager
        time: `2025-01-01T00:00:${String(Math.floor(i / 2) + 1).padStart(2, "0")}Z`,
        // an update sends the live object's managedFields back (a client's read-modify-write) or none
        keepManaged: s.keepManaged
      }))
    )

type Obj = FM.Obj

/** our FieldManager over the steps, as the oracle runs them */
const ours = (
  k: Kind,
  request: ReadonlyArray<SsaStep & { keepManaged?: "keep" | "none" | "reset" }>
): Array<SsaResult> => {
  const schema = fromOpenApi(k.definitions)
  let live: Obj | undefined
  return request.map((step) => {
    const cfg: FM.FieldManagerConfig = {
      typed: { schema, type: { named: k.type }, versions: new Set([k.apiVersion]), ignored: k.reset },
      gvk: k.gvk,
      subresource: "",
      now: () => step.time!
    }
    const obj = structuredClone(step.object) as Obj
    try {
      if (step.op === "apply") {
        live = FM.apply(
          cfg,
          live ?? { apiVersion: k.apiVersion, kind: k.gvk.kind },
          obj,
          step.manager,
          step.force === true
        )
      } else {
        if ((step.op === "create") !== (live === undefined)) return { object: null, error: { message: "state" } }
        const before = live ?? { apiVersion: k.apiVersion, kind: k.gvk.kind }
        if (step.keepManaged === "reset") obj.metadata = { ...obj.metadata, managedFields: [] }
        else if (step.keepManaged === "keep" && live?.metadata?.["managedFields"] !== undefined)
          obj.metadata = { ...obj.metadata, managedFields: structuredClone(live.metadata["managedFields"]) }
        live = FM.update(cfg, before, obj, step.manager)
      }
      return { object: structuredClone(live) as Record<string, unknown>, error: null }
    } catch (e) {
      if (e instanceof ApplyConflict)
        return {
          object: null,
          error: { code: 409, reason: "Conflict", message: e.message, causes: e.causes.map((c) => ({ ...c })) }
        }
      if (e instanceof ApplyBadRequest)
        return { object: null, error: { code: 400, reason: "BadRequest", message: e.message } }
      return { object: null, error: { message: (e as Error).message } }
    }
  })
}

/** the oracle's steps: an update carries what ours sent (the live managedFields when kept) */
const withSentManagedFields = (
  steps: ReadonlyArray<SsaStep & { keepManaged?: "keep" | "none" | "reset" }>,
  results: ReadonlyArray<SsaResult>
): Array<SsaStep> => {
  let live: Record<string, unknown> | undefined
  return steps.map(({ keepManaged, ...step }, i) => {
    const out = { ...step }
    const mf = (live?.["metadata"] as Record<string, unknown> | undefined)?.["managedFields"]
    if (step.op === "update" && keepManaged === "reset")
      out.object = { ...step.object, metadata: { ...(step.object["metadata"] as object), managedFields: [] } }
    else if (step.op === "update" && keepManaged === "keep" && mf !== undefined)
      out.object = { ...step.object, metadata: { ...(step.object["metadata"] as object), managedFields: mf } }
    if (results[i]?.object) live = results[i]!.object!
    return out
  })
}

/** JSON with sorted keys (arrays keep their order): a difference shows in full */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    typeof x === "object" && x !== null && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Record<string, unknown>)[k]])
        )
      : x
  )

/**
 * results compared as Kubernetes answers: an error without a status only as "an error"; a
 * conflict's causes as a set (Go lists them in its map order of managers, which varies)
 */
const comparable = (r: SsaResult) => {
  if (r.error === null) return r
  if (r.error.code === undefined) return { object: null, error: "failed" }
  const causes =
    r.error.causes === undefined
      ? undefined
      : [...r.error.causes].sort((a, b) => canonical(a).localeCompare(canonical(b)))
  return { ...r, error: { ...r.error, ...(causes === undefined ? {} : { causes }) } }
}

describe.skipIf(!hasGo && process.env["REQUIRE_GO"] !== "1")("FieldManager vs Kubernetes' (ssa-oracle)", () => {
  layer(SsaOracle.layer, { timeout: "10 minutes" })((it) => {
    for (const k of [configMap, widgets])
      it.effect(
        `${k.gvk.kind}: random creates, updates and applies give Kubernetes' objects, managedFields and conflicts`,
        () =>
          Effect.gen(function* () {
            const oracle = yield* SsaOracle
            const runtime = yield* Effect.runtime<never>()
            const resetFields = k.reset === undefined ? undefined : { "": [["status"]] }
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(steps(k), async (request) => {
                  const mine = ours(k, request)
                  const sent = withSentManagedFields(request, mine)
                  const req: SsaRequest = {
                    definitions: k.definitions,
                    gvk: k.gvk,
                    steps: sent,
                    ...(resetFields ? { resetFields } : {})
                  }
                  const theirs = await Runtime.runPromise(runtime)(oracle.run(req))
                  // step by step: the first step that differs is the one shown
                  theirs.results.forEach((r, i) => {
                    const a = canonical(comparable(mine[i]!))
                    const b = canonical(comparable(r))
                    if (a !== b) throw new Error(`step ${i} differs\nours:       ${a}\nKubernetes: ${b}`)
                  })
                }),
                { numRuns: 150, seed: 27 }
              )
            )
          })
      )
  })
})
