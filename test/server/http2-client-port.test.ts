/**
 * HTTP/2 that is not gRPC on the client port, as etcd's mux serves it (embed/serve.go): a request
 * whose content-type is not application/grpc goes to the HTTP handlers — /health, /livez, /readyz,
 * /metrics, /version and the JSON gateway — over TLS (ALPN h2, as curl --http2 and Go's HTTP
 * client, Prometheus among them, negotiate) and over h2c with prior knowledge, on both gRPC
 * transports, beside gRPC calls on the same connection.
 *
 * etcd 3.4 with the same certificates is the reference over TLS. Over h2c it differs: its
 * plain-text listener gives every HTTP/2 connection to the gRPC server, which resets a GET with
 * PROTOCOL_ERROR; here the HTTP handlers answer (the test shows both).
 */
import * as http2 from "node:http2"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultClientTlsConfig } from "../../src/server/tls-config.js"
import { makeTestPki, type TestPki } from "../support/certs.js"
import { EtcdProcess, runCommand, skipEtcd } from "../support/etcd.js"
import { type InProcessServer, startInProcess } from "./support/in-process.js"

interface Fetched {
  readonly code: number
  readonly version: string
  readonly status: number
  readonly body: string
}

/** curl as a user runs it: `--http2` over TLS (ALPN), `--http2-prior-knowledge` over plain text. */
const curl = async (pki: TestPki, url: string, extra: ReadonlyArray<string> = []): Promise<Fetched> => {
  const mode = url.startsWith("https:") ? ["--http2", "--cacert", pki.ca] : ["--http2-prior-knowledge"]
  const r = await runCommand("curl", ["-s", ...mode, ...extra, "-w", "\n%{http_version} %{http_code}", url])
  const at = r.stdout.lastIndexOf("\n")
  const [version = "", status = "0"] = r.stdout.slice(at + 1).split(" ")
  return { code: r.code, version, status: Number(status), body: r.stdout.slice(0, at) }
}

/** without ids, revisions and versions: what two servers' answers must share */
const shape = (body: string): string =>
  body.replace(/"\d+"/g, '"N"').replace(/"(etcdserver|etcdcluster)":"[^"]*"/g, '"$1":"V"')

describe.skipIf(skipEtcd).each(["lean", "grpc-js"] as const)("plain HTTP/2 on the client port (%s)", (transport) => {
  let pki: TestPki
  let ours: InProcessServer
  let etcd: EtcdProcess
  let https: string
  let h2c: string

  beforeAll(async () => {
    pki = makeTestPki()
    const tls = { ...defaultClientTlsConfig, certFile: pki.server.cert, keyFile: pki.server.key }
    ;[ours, etcd] = await Promise.all([
      startInProcess({
        listenClientUrls: ["https://127.0.0.1:0", "http://127.0.0.1:0"],
        tls,
        grpcTransport: transport
      }),
      EtcdProcess.start({
        clientScheme: "https",
        extraArgs: ["--cert-file", pki.server.cert, "--key-file", pki.server.key]
      })
    ])
    https = `https://${ours.server.endpoints[0]}`
    h2c = `http://${ours.server.endpoints[1]}`
  }, 120_000)
  afterAll(async () => {
    await Promise.all([ours?.close(), etcd?.dispose()])
    pki?.dispose()
  })

  it("over TLS (ALPN h2): the health checks, /metrics, /version and the gateway answer as etcd 3.4's", async () => {
    for (const path of ["/health", "/version", "/metrics", "/nope"]) {
      const [a, b] = await Promise.all([curl(pki, `${https}${path}`), curl(pki, `${etcd.clientUrl}${path}`)])
      expect({ version: a.version, status: a.status }, path).toEqual({ version: "2", status: b.status })
      expect(b.version, `etcd 3.4 ${path}`).toBe("2")
    }
    for (const path of ["/livez", "/readyz"])
      expect(await curl(pki, `${https}${path}`)).toMatchObject({ version: "2", status: 200, body: "ok\n" })
    const put = ["-X", "POST", "-d", '{"key":"aDI=","value":"djE="}']
    const [pa, pb] = await Promise.all([
      curl(pki, `${https}/v3/kv/put`, put),
      curl(pki, `${etcd.clientUrl}/v3/kv/put`, put)
    ])
    expect(shape(pa.body)).toBe(shape(pb.body))
    const range = ["-X", "POST", "-d", '{"key":"aDI="}']
    const [ra, rb] = await Promise.all([
      curl(pki, `${https}/v3/kv/range`, range),
      curl(pki, `${etcd.clientUrl}/v3/kv/range`, range)
    ])
    expect({ version: ra.version, status: ra.status, body: shape(ra.body) }).toEqual({
      version: "2",
      status: 200,
      body: shape(rb.body)
    })
    const bad = ["-X", "POST", "-d", '{"key": 5}']
    const [ba, bb] = await Promise.all([
      curl(pki, `${https}/v3/kv/range`, bad),
      curl(pki, `${etcd.clientUrl}/v3/kv/range`, bad)
    ])
    expect({ status: ba.status, body: ba.body }).toEqual({ status: bb.status, body: bb.body })
  })

  it("over h2c with prior knowledge: the HTTP handlers answer (etcd 3.4 resets the stream)", async () => {
    const health = await curl(pki, `${h2c}/health`)
    expect(health).toEqual({ code: 0, version: "2", status: 200, body: '{"health":"true","reason":""}' })
    expect(await curl(pki, `${h2c}/version`)).toMatchObject({ version: "2", status: 200 })
    // its own key: in a shuffled run the TLS test's put may come later
    const put = await curl(pki, `${h2c}/v3/kv/put`, ["-X", "POST", "-d", '{"key":"aDI=","value":"djE="}'])
    expect(put).toMatchObject({ version: "2", status: 200 })
    const range = await curl(pki, `${h2c}/v3/kv/range`, ["-X", "POST", "-d", '{"key":"aDI="}'])
    expect(range).toMatchObject({ version: "2", status: 200 })
    expect(JSON.parse(range.body).kvs[0].value).toBe("djE=")
    // etcd 3.4's plain-text listener gives HTTP/2 to its gRPC server, which resets a GET
    const etcdPlain = await EtcdProcess.start()
    try {
      const theirs = await curl(pki, `${etcdPlain.clientUrl}/health`)
      // curl: "HTTP/2 stream 1 was not closed cleanly: PROTOCOL_ERROR (err 1)"
      expect({ code: theirs.code, status: theirs.status }).toEqual({ code: 92, status: 0 })
    } finally {
      await etcdPlain.dispose()
    }
  })

  it("gRPC and plain HTTP/2 share one connection; a body larger than the window arrives whole", async () => {
    const session = http2.connect(h2c)
    try {
      const request = (headers: http2.OutgoingHttpHeaders, body?: Buffer) =>
        new Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: Buffer }>(
          (resolve, reject) => {
            const stream = session.request(headers)
            const chunks: Array<Buffer> = []
            let head: http2.IncomingHttpHeaders = {}
            let trailers: http2.IncomingHttpHeaders = {}
            stream.on("response", (h) => (head = h))
            stream.on("trailers", (t) => (trailers = t))
            stream.on("data", (c: Buffer) => chunks.push(c))
            stream.on("end", () => resolve({ headers: head, trailers, body: Buffer.concat(chunks) }))
            stream.on("error", reject)
            stream.end(body)
          }
        )
      const [status, metrics, options] = await Promise.all([
        // Maintenance.Status with an empty request: one gRPC message frame of 0 bytes
        request(
          {
            ":method": "POST",
            ":path": "/etcdserverpb.Maintenance/Status",
            "content-type": "application/grpc",
            te: "trailers"
          },
          Buffer.alloc(5)
        ),
        request({ ":method": "GET", ":path": "/metrics" }),
        request({ ":method": "OPTIONS", ":path": "/v3/kv/range", origin: "http://example.com" })
      ])
      expect(status.headers[":status"]).toBe(200)
      expect(status.trailers["grpc-status"] ?? status.headers["grpc-status"]).toBe("0")
      expect(metrics.headers[":status"]).toBe(200)
      expect(metrics.body.length).toBeGreaterThan(65_535)
      expect(metrics.body.toString()).toMatch(/^etcd_server_has_leader 1$/m)
      expect(options.headers["access-control-allow-origin"]).toBe("*")
    } finally {
      session.close()
    }
  })

  it("a gateway watch streams over HTTP/2, and the client's reset cancels it", async () => {
    const session = http2.connect(h2c)
    try {
      const stream = session.request({ ":method": "POST", ":path": "/v3/watch" })
      stream.end('{"create_request": {"key": "dzE="}}')
      let out = ""
      stream.on("data", (d: Buffer) => (out += d.toString()))
      const until = async (text: string) => {
        const deadline = Date.now() + 10_000
        while (!out.includes(text)) {
          expect(Date.now(), out).toBeLessThan(deadline)
          await new Promise((r) => setTimeout(r, 10))
        }
      }
      await until('"created":true')
      await curl(pki, `${h2c}/v3/kv/put`, ["-X", "POST", "-d", '{"key":"dzE=","value":"eA=="}'])
      await until('"value":"eA=="')
      const watchers = async () =>
        Number(/^etcd_debugging_mvcc_watcher_total (\d+)$/m.exec((await curl(pki, `${h2c}/metrics`)).body)?.[1])
      expect(await watchers()).toBe(1)
      const closed = new Promise((r) => stream.once("close", r))
      stream.close(http2.constants.NGHTTP2_CANCEL)
      await closed
      // the server cancels the watch; the connection serves on
      const deadline = Date.now() + 10_000
      while ((await watchers()) !== 0) expect(Date.now()).toBeLessThan(deadline)
    } finally {
      session.close()
    }
  })
})
