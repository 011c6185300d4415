/**
 * One client port, two protocols (cmux.ts): the sniff's decision as a property; gRPC (etcdctl)
 * and HTTP/1.1 (the gateway, /metrics) on one port at the same time; HTTP/1 requests whose first
 * bytes arrive one at a time; connections that close or send garbage before anything is decided;
 * a gateway watch ended by shutdown with grpc-gateway's error chunk; the metrics listener as an
 * opt-in extra (etcd's empty --listen-metrics-urls default), also for the serve program, so two
 * servers with default flags run side by side.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import { afterAll, beforeAll } from "vitest"
import { classify, HTTP2_PREFACE } from "../../src/server/cmux.js"
import { etcdctlAvailable } from "../support/etcd.js"
import { etcdctl } from "./support/etcdctl.js"
import { eventually, startInProcess } from "./support/in-process.js"
import { beyondInfo, ensureBuilt, ServeProcess, tempDir } from "./support/process.js"

const b64 = (s: string) => Buffer.from(s).toString("base64")

const post = async (base: string, path: string, body: unknown) => {
  const res = await fetch(`${base}${path}`, { method: "POST", body: JSON.stringify(body) })
  return { status: res.status, json: (await res.json()) as Record<string, any> }
}

/**
 * A raw TCP exchange: writes `chunks` one by one (each its own segment), half-closes when `end`,
 * reads until the server closes.
 */
const rawExchange = (port: number, chunks: ReadonlyArray<Buffer>, end = false): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port, noDelay: true })
    let out = ""
    socket.on("data", (d) => (out += d.toString("latin1")))
    socket.on("error", reject)
    socket.on("close", () => resolve(out))
    socket.on("connect", async () => {
      for (const c of chunks) {
        socket.write(c)
        // let each chunk leave as its own segment
        await new Promise((r) => setImmediate(r))
      }
      if (end) socket.end()
    })
  })

describe("cmux: the sniff", () => {
  it("HTTP/2 only on the full preface; any other first byte is HTTP/1 at once", () => {
    expect(classify(HTTP2_PREFACE)).toBe("grpc")
    expect(classify(Buffer.from("GET / HTTP/1.1\r\n"))).toBe("http1")
    expect(classify(Buffer.from("PRI * HTTP/1.1\r\n"))).toBe("http1")
    expect(classify(Buffer.from("PRI"))).toBeUndefined()
    expect(classify(Buffer.alloc(0))).toBeUndefined()
  })

  it.prop(
    "a strict prefix waits, the preface and more is gRPC, a mismatch at byte i is HTTP/1",
    [fc.nat({ max: HTTP2_PREFACE.length }), fc.uint8Array({ maxLength: 40 }), fc.integer({ min: 0, max: 255 })],
    ([n, tail, wrong]) => {
      const prefix = HTTP2_PREFACE.subarray(0, n)
      if (n < HTTP2_PREFACE.length) {
        expect(classify(prefix)).toBeUndefined()
        if (wrong !== HTTP2_PREFACE[n]) {
          expect(classify(Buffer.concat([prefix, Buffer.from([wrong]), tail]))).toBe("http1")
        }
      } else {
        expect(classify(Buffer.concat([prefix, tail]))).toBe("grpc")
      }
    }
  )
})

describe("one port: gRPC and HTTP/1.1", () => {
  let server: Awaited<ReturnType<typeof startInProcess>>
  let base: string
  beforeAll(async () => {
    server = await startInProcess()
    base = `http://${server.endpoint}`
  })
  afterAll(() => server?.close())

  it.skipIf(!etcdctlAvailable)("etcdctl and the gateway and /metrics at the same time", async () => {
    const n = 20
    const grpcWrites = Array.from({ length: n }, (_, i) => etcdctl(server.endpoint, ["put", `g${i}`, `v${i}`]))
    const httpWrites = Array.from({ length: n }, (_, i) =>
      post(base, "/v3/kv/put", { key: b64(`h${i}`), value: b64(`v${i}`) })
    )
    const scrapes = Array.from({ length: 5 }, () => fetch(`${base}/metrics`).then((r) => r.text()))
    const [ctl, http, metrics] = await Promise.all([
      Promise.all(grpcWrites),
      Promise.all(httpWrites),
      Promise.all(scrapes)
    ])
    expect(ctl.every((r) => r.code === 0 && r.stdout === "OK\n")).toBe(true)
    expect(http.every((r) => r.status === 200)).toBe(true)
    expect(metrics.every((t) => t.includes("etcd_server_has_leader 1"))).toBe(true)
    // each side sees the other's writes
    const viaGateway = await post(base, "/v3/kv/range", { key: b64("g"), range_end: b64("h\xff"), count_only: true })
    expect(viaGateway.json["count"]).toBe(String(2 * n))
    const viaGrpc = await etcdctl(server.endpoint, ["get", "h", "--prefix", "--keys-only", "-w", "json"])
    expect(JSON.parse(viaGrpc.stdout).count).toBe(n)
    // gateway calls go through the gRPC services: they are counted as gRPC calls
    const text = await (await fetch(`${base}/metrics`)).text()
    const put = /grpc_server_handled_total\{grpc_code="OK",grpc_method="Put",[^}]*\} (\d+)/.exec(text)
    expect(Number(put?.[1])).toBe(2 * n)
  })

  it("HTTP/1 first bytes one at a time, a silent close, garbage", async () => {
    const port = Number(server.endpoint.split(":")[1])
    const request = Buffer.from("GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    const reply = await rawExchange(
      port,
      [...request.subarray(0, 8)].map((b) => Buffer.from([b])).concat([request.subarray(8)])
    )
    expect(reply).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(reply).toContain('{"etcdserver":"3.5.24","etcdcluster":"3.5.0"}')
    // "PRI" then a close: nothing decided, nothing answered, nothing broken
    expect(await rawExchange(port, [HTTP2_PREFACE.subarray(0, 3)], true)).toBe("")
    // not HTTP at all: the HTTP/1 parser's 400
    expect(await rawExchange(port, [Buffer.from([0, 1, 2, 3, 13, 10, 13, 10])], true)).toMatch(
      /^HTTP\/1\.1 400 Bad Request/
    )
    // and the port still serves both
    expect((await fetch(`${base}/health`)).status).toBe(200)
    if (etcdctlAvailable) expect((await etcdctl(server.endpoint, ["get", "x"])).code).toBe(0)
  })
})

describe("shutdown and the metrics listener", () => {
  it("a gateway watch open at shutdown ends with grpc-gateway's error chunk", async () => {
    const s = await startInProcess()
    const res = await fetch(`http://${s.endpoint}/v3/watch`, {
      method: "POST",
      body: JSON.stringify({ create_request: { key: b64("k") } })
    })
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = decoder.decode((await reader.read()).value)
    expect(text).toContain('"created":true')
    const closing = s.close()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    await closing
    expect(text.trim().split("\n").at(-1)).toBe(
      '{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: server stopped","http_status":"Service Unavailable"}}'
    )
  })

  it("no extra listener by default; --listen-metrics-urls adds one (without /version)", async () => {
    const plain = await startInProcess()
    try {
      expect(plain.server.metricsUrls).toEqual([])
      expect((await fetch(`http://${plain.endpoint}/readyz`)).status).toBe(200)
    } finally {
      await plain.close()
    }
    const withListener = await startInProcess({ listenMetricsUrls: ["http://127.0.0.1:0"] })
    try {
      expect(withListener.server.metricsUrls).toHaveLength(1)
      const url = withListener.server.metricsUrls[0]!
      expect(await (await fetch(`${url}/metrics`)).text()).toContain("etcd_server_has_leader 1")
      expect((await fetch(`${url}/version`)).status).toBe(404)
      expect((await fetch(`http://${withListener.endpoint}/version`)).status).toBe(200)
    } finally {
      await withListener.close()
    }
  })
})

describe("etcd-effect serve with default flags (process)", () => {
  const dirs: Array<string> = []
  const procs: Array<ServeProcess> = []
  beforeAll(async () => {
    await ensureBuilt()
  }, 300_000)
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGKILL")))
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })

  it("two members side by side: no metrics port to collide on; each serves HTTP on its client port", async () => {
    for (let i = 0; i < 2; i++) {
      const dir = tempDir()
      dirs.push(dir)
      procs.push(await ServeProcess.start({ dataDir: dir }))
    }
    for (const p of procs) {
      const base = `http://${p.endpoint}`
      await eventually(
        () =>
          fetch(`${base}/health`).then(
            (r) => r.status === 200,
            () => false
          ),
        10_000,
        "health"
      )
      expect(await (await fetch(`${base}/metrics`)).text()).toContain("etcd_server_has_leader 1")
      const put = await post(base, "/v3/kv/put", { key: b64("a"), value: b64("b") })
      expect(put.status).toBe(200)
    }
    for (const p of procs) expect(await p.kill("SIGTERM")).toBe(0)
    expect(procs.map((p) => beyondInfo(p.stderr))).toEqual([[], []])
  })
})
