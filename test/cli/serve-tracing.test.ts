/**
 * `serve`'s distributed tracing from etcd's flags (src/cli/serve-tracing.ts), against an in-process
 * OTLP/HTTP receiver (a node:http server decoding OTLP/JSON, as the tracing test's): with
 * --enable-distributed-tracing the member's RPC spans reach --distributed-tracing-address under
 * --distributed-tracing-service-name and -instance-id; at sampling rate 0 (etcd's default) a request
 * without a `traceparent` (etcdctl's) is not traced while one under a sampled trace (our client's) is;
 * a rate over a million is refused in etcd's words.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Client } from "../../src/index.js"
import { ETCDCTL_BIN, etcdctlAvailable, requireEtcd } from "../support/etcd.js"
import { untilDone } from "../support/stall.js"
import { ensureBuilt, mainJs, ServeProcess, tempDir } from "../server/support/process.js"

interface ReceivedSpan {
  readonly name: string
  readonly kind: number
  readonly parentSpanId?: string
  readonly service: string
  readonly instance: string | undefined
}

/** an OTLP/HTTP JSON receiver on a free port: the spans it was sent, with their resource's names */
const receiver = async () => {
  const spans: Array<ReceivedSpan> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          const attr = (key: string): string | undefined =>
            rs.resource?.attributes?.find((a: { key: string }) => a.key === key)?.value?.stringValue
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans)
              spans.push({ ...s, service: attr("service.name") ?? "", instance: attr("service.instance.id") })
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return { spans, address: `http://127.0.0.1:${port}`, close: () => server.close() }
}

const serverPuts = (spans: ReadonlyArray<ReceivedSpan>) =>
  spans.filter((s) => s.name === "etcdserverpb.KV/Put" && s.kind === 2)
const hasParent = (s: ReceivedSpan) => s.parentSpanId !== undefined && s.parentSpanId !== ""

const etcdctlPut = (endpoint: string, key: string) =>
  execFileSync(ETCDCTL_BIN, ["--endpoints", endpoint, "put", key, "v"], { env: { ...process.env, ETCDCTL_API: "3" } })

const clientPut = (endpoint: string, key: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const etcd = yield* Client.EtcdClient
      yield* etcd.kv.put(key, "v")
    }).pipe(Effect.provide(Client.EtcdClient.layer({ endpoints: [endpoint] })))
  )

describe.skipIf(!etcdctlAvailable && !requireEtcd)("serve --enable-distributed-tracing", () => {
  const running: Array<ServeProcess> = []
  const closers: Array<() => void> = []
  beforeAll(ensureBuilt, 600_000)
  afterAll(async () => {
    for (const p of running) await p.kill()
    for (const c of closers) c()
  })

  it("exports the member's spans to the address, under the service name and instance id", async () => {
    const r = await receiver()
    closers.push(r.close)
    const p = await ServeProcess.start({
      dataDir: tempDir(),
      args: [
        "--enable-distributed-tracing",
        "--distributed-tracing-address",
        r.address,
        "--distributed-tracing-service-name",
        "etcd-under-test",
        "--distributed-tracing-instance-id",
        "member-7",
        "--distributed-tracing-sampling-rate",
        "1000000"
      ]
    })
    running.push(p)
    etcdctlPut(p.endpoint, "/traced")
    await untilDone(
      "the put's server span",
      () => serverPuts(r.spans).length > 0,
      () => r.spans.length
    )
    expect(serverPuts(r.spans)[0]).toMatchObject({ service: "etcd-under-test", instance: "member-7" })
  })

  it("at rate 0 (3.5's experimental names) traces only requests under a sampled trace", async () => {
    const r = await receiver()
    closers.push(r.close)
    const p = await ServeProcess.start({
      dataDir: tempDir(),
      args: ["--experimental-enable-distributed-tracing", "--experimental-distributed-tracing-address", r.address]
    })
    running.push(p)
    etcdctlPut(p.endpoint, "/untraced")
    await clientPut(p.endpoint, "/traced")
    // spans leave in the order they end: once the client's put is here, etcdctl's would be too
    await untilDone(
      "the client put's server span",
      () => serverPuts(r.spans).some(hasParent),
      () => r.spans.length
    )
    expect(serverPuts(r.spans).filter((s) => !hasParent(s))).toEqual([])
    expect(serverPuts(r.spans)[0]).toMatchObject({ service: "etcd", instance: undefined })
  })

  it("refuses a sampling rate over a million in etcd's words, with tracing on", () => {
    const r = spawnSync(
      process.execPath,
      [mainJs, "serve", "--enable-distributed-tracing", "--distributed-tracing-sampling-rate", "1000001"],
      { cwd: tempDir(), encoding: "utf8" }
    )
    expect(r.status).toBe(1)
    expect(r.stderr).toContain(
      "distributed tracing configurition is not valid: (tracing sampling rate must be less than 1000000)"
    )
  })
})
