/**
 * etcd's sampler (src/tracing/sampler.ts): ParentBased(TraceIDRatioBased(rate / 1e6)) in front of
 * a tracer, the check of --distributed-tracing-sampling-rate in etcd's words, and the traces URL of
 * --distributed-tracing-address.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, FastCheck as fc, Option, Tracer } from "effect"
import { checkSamplingRate, parentBasedRatio, traceIdSampled } from "../../src/tracing/sampler.js"
import { tracesUrlOfAddress } from "../../src/tracing/otlp-exporter.js"

/** a tracer that records the names of the spans it was asked for */
const recording = () => {
  const names: Array<string> = []
  const inner = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      names.push(name)
      return {
        _tag: "Span",
        name,
        spanId: "1".repeat(16),
        traceId: Option.isSome(parent) ? parent.value.traceId : "2".repeat(32),
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: () => {},
        event: () => {},
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { names, inner }
}

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`))
const parentOf = (traceId: string, sampled: boolean): Option.Option<Tracer.AnySpan> =>
  Option.some(Tracer.externalSpan({ traceId, spanId: "3".repeat(16), sampled }))
const open = (t: Tracer.Tracer, name: string, parent: Option.Option<Tracer.AnySpan>) =>
  t.span(name, parent, Context.empty(), [], 0n, "server")

describe("etcd's sampler", () => {
  it.prop(
    "a child follows its parent's decision, at any rate",
    [fc.integer({ min: 0, max: 1_000_000 }), hex(32), fc.boolean()],
    ([rate, traceId, sampled]) => {
      const { names, inner } = recording()
      const span = open(parentBasedRatio(inner, rate), "child", parentOf(traceId, sampled))
      expect(span.sampled).toBe(sampled)
      expect(span.traceId).toBe(traceId)
      expect(names).toEqual(sampled ? ["child"] : [])
    }
  )

  it("at rate 0 no root span is sampled, at 1000000 every one is", () => {
    const { names, inner } = recording()
    for (let i = 0; i < 200; i++) expect(open(parentBasedRatio(inner, 0), "root", Option.none()).sampled).toBe(false)
    expect(names).toEqual([])
    for (let i = 0; i < 200; i++) open(parentBasedRatio(inner, 1_000_000), "root", Option.none())
    expect(names).toHaveLength(200)
  })

  it("an unsampled root's children are not sampled either", () => {
    const { names, inner } = recording()
    const tracer = parentBasedRatio(inner, 0)
    const root = open(tracer, "root", Option.none())
    const child = open(tracer, "child", Option.some(root))
    expect([root.sampled, child.sampled, child.traceId]).toEqual([false, false, root.traceId])
    root.end(1n, { _tag: "Success", value: undefined } as never)
    expect(root.status._tag).toBe("Ended")
    expect(names).toEqual([])
  })

  it.prop(
    "TraceIDRatioBased: a trace id sampled at a rate is sampled at every higher rate",
    [hex(32), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 })],
    ([traceId, a, b]) => {
      const [low, high] = a <= b ? [a, b] : [b, a]
      if (traceIdSampled(traceId, low)) expect(traceIdSampled(traceId, high)).toBe(true)
    }
  )

  it("TraceIDRatioBased reads the trace id's last 8 bytes against rate × 2^63", () => {
    // 0x…00 is below any positive bound; 0x…ff…ff (>> 1 = 2^63 - 1) is sampled only at the full rate
    expect(traceIdSampled("f".repeat(16) + "0".repeat(16), 1)).toBe(true)
    expect(traceIdSampled("0".repeat(16) + "f".repeat(16), 999_999)).toBe(false)
    expect(traceIdSampled("0".repeat(16) + "f".repeat(16), 1_000_000)).toBe(true)
    // half the range at half the rate
    expect(traceIdSampled("0".repeat(16) + "7fffffffffffffff", 500_000)).toBe(true)
    expect(traceIdSampled("0".repeat(16) + "8000000000000002", 500_000)).toBe(false)
  })

  it("checks the rate in etcd's words (embed/config_tracing.go)", () => {
    expect(checkSamplingRate(0)).toBeUndefined()
    expect(checkSamplingRate(1_000_000)).toBeUndefined()
    expect(checkSamplingRate(-1)).toBe("tracing sampling rate must be positive")
    expect(checkSamplingRate(1_000_001)).toBe("tracing sampling rate must be less than 1000000")
  })
})

describe("--distributed-tracing-address", () => {
  it("a host:port is the OTLP/HTTP collector there, a URL is taken as given", () => {
    expect(tracesUrlOfAddress("localhost:4317")).toBe("http://localhost:4317/v1/traces")
    expect(tracesUrlOfAddress("http://127.0.0.1:4318")).toBe("http://127.0.0.1:4318/v1/traces")
    expect(tracesUrlOfAddress("https://collector:4318/")).toBe("https://collector:4318/v1/traces")
    expect(tracesUrlOfAddress("http://collector:4318/otlp/v1/traces")).toBe("http://collector:4318/otlp/v1/traces")
  })
})
