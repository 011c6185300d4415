/**
 * Tracing end to end: an in-process OTLP/HTTP receiver (a node:http server decoding OTLP/JSON, as a
 * collector's otlphttp receiver does), a member with distributed tracing on, and a put through the
 * client under Tracing.layerOtlp: the receiver sees one trace holding the client's span
 * `etcdserverpb.KV/Put` and, as its child, the server's. With tracing off the server adds no span.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Logger, LogLevel } from "effect"
import * as http from "node:http"
import { Client, Server, Tracing } from "../../src/index.js"
import { untilDone } from "../support/stall.js"

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
}

/** an OTLP/HTTP JSON receiver on a free port: the spans it was sent, and where to send them */
const receiver = Effect.acquireRelease(
  Effect.async<{ url: string; spans: Array<OtlpSpan>; services: Set<string>; close: () => void }>((resume) => {
    const spans: Array<OtlpSpan> = []
    const services = new Set<string>()
    const server = http.createServer((req, res) => {
      let body = ""
      req.on("data", (d) => (body += d))
      req.on("end", () => {
        if (req.url === "/v1/traces" && req.headers["content-type"]?.startsWith("application/json")) {
          for (const rs of JSON.parse(body).resourceSpans ?? []) {
            for (const a of rs.resource?.attributes ?? [])
              if (a.key === "service.name") services.add(a.value.stringValue)
            for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans)
          }
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      resume(
        Effect.succeed({ url: `http://127.0.0.1:${port}/v1/traces`, spans, services, close: () => server.close() })
      )
    })
  }),
  (r) => Effect.sync(r.close)
)

/** a member (tracing on or off) and a put through a client of it, all under the OTLP exporter */
const putTraced = (url: string, distributedTracing: boolean) =>
  Effect.gen(function* () {
    const server = yield* Server.serve({ listenClientUrls: ["http://127.0.0.1:0"], distributedTracing })
    yield* Effect.gen(function* () {
      const etcd = yield* Client.EtcdClient
      yield* etcd.kv.put("/traced", "1")
    }).pipe(Effect.provide(Client.EtcdClient.layer({ endpoints: server.endpoints })))
  }).pipe(
    Effect.scoped,
    Effect.provide(Tracing.layerOtlp({ url, serviceName: "etcd-effect-test", exportInterval: "100 millis" })),
    Logger.withMinimumLogLevel(LogLevel.Warning)
  )

const puts = (spans: ReadonlyArray<OtlpSpan>) => spans.filter((s) => s.name === "etcdserverpb.KV/Put")

describe("tracing over OTLP", () => {
  it.live("a put through the client is one trace: the client's span, and the server's as its child", () =>
    Effect.gen(function* () {
      const r = yield* receiver
      yield* putTraced(r.url, true)
      // the exporter flushes when its layer closes; wait for the event, not for a time
      yield* Effect.promise(() =>
        untilDone(
          "the put's two spans",
          () => puts(r.spans).length >= 2,
          () => r.spans.length
        )
      )
      const client = puts(r.spans).find((s) => s.kind === 3)
      const server = puts(r.spans).find((s) => s.kind === 2)
      expect(client).toBeDefined()
      expect(server).toBeDefined()
      expect(server!.traceId).toBe(client!.traceId)
      expect(server!.parentSpanId).toBe(client!.spanId)
      expect(r.services).toEqual(new Set(["etcd-effect-test"]))
    }).pipe(Effect.scoped)
  )

  it.live("with distributed tracing off the server adds no span; the client's still goes out", () =>
    Effect.gen(function* () {
      const r = yield* receiver
      yield* putTraced(r.url, false)
      yield* Effect.promise(() =>
        untilDone(
          "the client's span",
          () => puts(r.spans).length >= 1,
          () => r.spans.length
        )
      )
      expect(puts(r.spans).map((s) => s.kind)).toEqual([3])
    }).pipe(Effect.scoped)
  )

  it.prop(
    "the traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else the endpoint's /v1/traces, else none",
    [
      fc.option(fc.webUrl({ withQueryParameters: false, withFragments: false }), { nil: undefined }),
      fc.option(fc.webUrl({ withQueryParameters: false, withFragments: false }), { nil: undefined }),
      fc.nat({ max: 3 })
    ],
    ([base, traces, slashes]) => {
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: base === undefined ? undefined : base.replace(/\/+$/, "") + "/".repeat(slashes),
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces
      }
      const expected =
        traces !== undefined ? traces : base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`
      expect(Tracing.otlpTracesUrl(env)).toBe(expected)
    },
    { fastCheck: { numRuns: 200 } }
  )
})
