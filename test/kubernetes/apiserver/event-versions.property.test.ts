/**
 * Property: an Event written through one group reads identically through the other after
 * the field mapping of pkg/apis/events/v1/conversion.go (note ↔ message, regarding ↔
 * involvedObject, deprecatedSource ↔ source, deprecatedFirstTimestamp ↔ firstTimestamp,
 * deprecatedLastTimestamp ↔ lastTimestamp, deprecatedCount ↔ count, reportingController ↔
 * reportingComponent), for random valid Events of either version — on get, list and watch.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { newNamespace, onApiServer, request, watch } from "./support.js"

const server = onApiServer()
const url = () => server().url

/** events.k8s.io/v1 name → core/v1 name, written out here (not the product's table) */
const MAPPING: Record<string, string> = {
  note: "message",
  regarding: "involvedObject",
  deprecatedSource: "source",
  deprecatedFirstTimestamp: "firstTimestamp",
  deprecatedLastTimestamp: "lastTimestamp",
  deprecatedCount: "count",
  reportingController: "reportingComponent"
}
const INVERSE = Object.fromEntries(Object.entries(MAPPING).map(([a, b]) => [b, a]))

const mapped = (obj: Record<string, unknown>, names: Record<string, string>, apiVersion: string) => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) out[names[k] ?? k] = v
  out["apiVersion"] = apiVersion
  return out
}

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/)
const text = fc.string({ maxLength: 40 })
const micro = fc
  .integer({ min: 1_600_000_000_000_000, max: 1_900_000_000_000_000 })
  .map((us) => new Date(Math.floor(us / 1000)).toISOString().replace("Z", `${String(us % 1000).padStart(3, "0")}Z`))
const seconds = fc
  .integer({ min: 1_600_000_000, max: 1_900_000_000 })
  .map((s) => new Date(s * 1000).toISOString().replace(".000Z", "Z"))
const ref = (ns: string) =>
  fc.record(
    { kind: fc.constantFrom("Pod", "ConfigMap", "Deployment"), name: word, namespace: fc.constant(ns), uid: word },
    { requiredKeys: ["kind", "name", "namespace"] }
  )

/** valid for events.k8s.io/v1's strict rules: what both groups accept */
const strictEvent = (ns: string) =>
  fc.record(
    {
      eventTime: micro,
      reportingController: fc.tuple(word, word).map(([a, b]) => `${a}.example.com/${b}`),
      reportingInstance: word,
      action: word,
      reason: word,
      type: fc.constantFrom("Normal", "Warning"),
      regarding: ref(ns),
      related: ref(ns),
      note: text,
      series: fc.record({ count: fc.integer({ min: 2, max: 1000 }), lastObservedTime: micro })
    },
    { requiredKeys: ["eventTime", "reportingController", "reportingInstance", "action", "reason", "type", "regarding"] }
  )

/** a legacy core/v1 Event (no eventTime: only the namespaces are checked) */
const legacyEvent = (ns: string) =>
  fc.record(
    {
      involvedObject: ref(ns),
      reason: word,
      message: text,
      type: fc.constantFrom("Normal", "Warning"),
      source: fc.record({ component: word, host: word }, { requiredKeys: [] }),
      firstTimestamp: seconds,
      lastTimestamp: seconds,
      count: fc.integer({ min: 1, max: 10_000 })
    },
    { requiredKeys: ["involvedObject"] }
  )

const written = (ns: string) =>
  fc.oneof(
    fc.record({ via: fc.constant("events.k8s.io/v1" as const), body: strictEvent(ns) }),
    fc.record({ via: fc.constant("v1" as const), body: strictEvent(ns).map((e) => mapped(e, MAPPING, "v1")) }),
    fc.record({ via: fc.constant("v1" as const), body: legacyEvent(ns) })
  )

const path = (apiVersion: string, ns: string) =>
  apiVersion === "v1" ? `/api/v1/namespaces/${ns}/events` : `/apis/events.k8s.io/v1/namespaces/${ns}/events`

describe("Event versions", () => {
  it("an Event written in one version reads as the mapping of it in the other (get, list, watch)", async () => {
    const ns = await newNamespace(url(), "evp")
    let n = 0
    const wCore = watch(url(), `${path("v1", ns)}?watch=1`)
    const wV1 = watch(url(), `${path("events.k8s.io/v1", ns)}?watch=1`)
    await Promise.all([wCore.response, wV1.response])
    const expectedCore: Array<unknown> = []
    const expectedV1: Array<unknown> = []
    try {
      await fc.assert(
        fc.asyncProperty(written(ns), async ({ via, body }) => {
          const name = `e${n++}`
          const other = via === "v1" ? "events.k8s.io/v1" : "v1"
          const c = await request(url(), "POST", path(via, ns), {
            ...body,
            apiVersion: via,
            kind: "Event",
            metadata: { name }
          })
          expect(c.status, c.text).toBe(201)
          const asOther = via === "v1" ? mapped(c.body, INVERSE, other) : mapped(c.body, MAPPING, other)
          // what was written is kept, and reads the same in its own version
          for (const [k, v] of Object.entries(body)) expect(c.body[k]).toEqual(v)
          expect((await request(url(), "GET", `${path(via, ns)}/${name}`)).body).toEqual(c.body)
          const g = await request(url(), "GET", `${path(other, ns)}/${name}`)
          expect(g.body).toEqual(asOther)
          const l = await request(url(), "GET", `${path(other, ns)}?fieldSelector=metadata.name%3D${name}`)
          expect(l.body.items).toEqual([asOther])
          expectedCore.push(via === "v1" ? c.body : asOther)
          expectedV1.push(via === "v1" ? asOther : c.body)
        }),
        { numRuns: 40 }
      )
      const [core, v1] = await Promise.all([wCore.waitFor(n), wV1.waitFor(n)])
      expect(core.map((e) => e.object)).toEqual(expectedCore)
      expect(v1.map((e) => e.object)).toEqual(expectedV1)
    } finally {
      wCore.close()
      wV1.close()
    }
  })
})
