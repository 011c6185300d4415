/**
 * HTTP/2 interop with clients that are not gRPC libraries (issue 12): Debian's nghttp2-client
 * tools against our server, over h2c (prior knowledge) and TLS with ALPN h2.
 *
 * - `nghttp` sends one gRPC unary call: a framed PutRequest or RangeRequest from a file (`-d`),
 *   content-type application/grpc, te: trailers; the response must end with grpc-status 0 and its
 *   body must be the framed response (decoded here: the key and value that were put).
 * - `h2load` drives N unary Puts of one key over M connections; its summary must say all N
 *   succeeded, 0 failed, 0 errored, and the key's version afterwards must be N (every call ran).
 *
 * etcd 3.4 is the oracle for what nghttp sees (same request, same grpc-status and body shape).
 * Parameterised over the server's transports like h2-hostile.test.ts.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { protoRoot } from "../../src/proto/load.js"
import { makeTestPki, type TestPki } from "../support/certs.js"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { call } from "./support/in-process.js"
import { type HostileServer, normalClient, startHostileServer, transports } from "./support/hostile-server.js"

const NGHTTP = "/usr/bin/nghttp"
const H2LOAD = "/usr/bin/h2load"
const toolsAvailable = fs.existsSync(NGHTTP) && fs.existsSync(H2LOAD)

const PutRequest = protoRoot.lookupType("etcdserverpb.PutRequest")
const RangeRequest = protoRoot.lookupType("etcdserverpb.RangeRequest")
const PutResponse = protoRoot.lookupType("etcdserverpb.PutResponse")
const RangeResponse = protoRoot.lookupType("etcdserverpb.RangeResponse")

/** a gRPC message: compressed flag 0, 4-byte length, the bytes */
const framed = (message: Uint8Array): Buffer => {
  const out = Buffer.alloc(5 + message.length)
  out.writeUInt32BE(message.length, 1)
  out.set(message, 5)
  return out
}

/** the messages of a gRPC response body */
const unframe = (body: Buffer): Array<Buffer> => {
  const out: Array<Buffer> = []
  for (let at = 0; at + 5 <= body.length;) {
    const n = body.readUInt32BE(at + 1)
    out.push(body.subarray(at + 5, at + 5 + n))
    at += 5 + n
  }
  return out
}

interface Run {
  readonly code: number | null
  readonly stdout: Buffer
  readonly stderr: string
}

/** runs a tool to its end (bounded by its own timeout flags and this kill timer) */
const run = (file: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { encoding: "buffer", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : typeof (err as any).code === "number" ? (err as any).code : null,
          stdout,
          stderr: stderr.toString()
        })
    )
  })

const grpcArgs = (bodyFile: string) => [
  "-H",
  ":method: POST",
  "-H",
  "content-type: application/grpc",
  "-H",
  "te: trailers",
  "-d",
  bodyFile
]

/**
 * One unary call with nghttp, made twice: a verbose run prints the response headers and trailers
 * ("recv (stream_id=N) name: value") but mixes the body into its output, a plain run writes only
 * the body to stdout.
 */
const nghttpCall = async (url: string, bodyFile: string) => {
  // the verbose run first: the body's run is the last call made (a Put's revision is the key's)
  const verbose = await run(NGHTTP, ["-v", "-n", "-t", "30", ...grpcArgs(bodyFile), url])
  const body = await run(NGHTTP, ["-t", "30", ...grpcArgs(bodyFile), url])
  const text = verbose.stdout.toString("latin1")
  const fields = new Map<string, string>()
  for (const m of text.matchAll(/recv \(stream_id=\d+\) ([^:\s][^:]*|:[a-z]+): (.*)/g)) fields.set(m[1]!, m[2]!.trim())
  return { body, verbose, text, fields, alpn: /The negotiated protocol: h2/.test(text) }
}

interface H2loadSummary {
  readonly total: number
  readonly succeeded: number
  readonly failed: number
  readonly errored: number
  readonly protocol: string | undefined
}

/** h2load's "requests: N total, N started, N done, N succeeded, 0 failed, 0 errored, 0 timeout" */
const h2loadSummary = (out: string): H2loadSummary | undefined => {
  const m = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out)
  if (m === null) return undefined
  return {
    total: Number(m[1]),
    succeeded: Number(m[2]),
    failed: Number(m[3]),
    errored: Number(m[4]),
    protocol: /Application protocol: (\S+)/.exec(out)?.[1]
  }
}

const serverSuite = (transport: (typeof transports)[number], tls: boolean) =>
  describe.skipIf(!toolsAvailable)(
    `nghttp and h2load against our server, ${transport}${tls ? ", TLS (ALPN h2)" : ", h2c"}`,
    () => {
      let server: HostileServer
      let pki: TestPki | undefined
      let dir: string
      let base: string
      beforeAll(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "h2-interop-"))
        pki = tls ? makeTestPki() : undefined
        server = await startHostileServer(transport, pki === undefined ? {} : { pki })
        base = `${tls ? "https" : "http"}://127.0.0.1:${server.port}`
      })
      afterAll(async () => {
        await server?.close()
        pki?.dispose()
        fs.rmSync(dir, { recursive: true, force: true })
      })

      it("nghttp: a Put and a Range as gRPC unary calls end with grpc-status 0 and the right response bytes", async () => {
        const key = `nghttp/${transport}/${tls}`
        const putFile = path.join(dir, "put.bin")
        fs.writeFileSync(
          putFile,
          framed(
            PutRequest.encode(PutRequest.fromObject({ key: Buffer.from(key), value: Buffer.from("hello") })).finish()
          )
        )
        const put = await nghttpCall(`${base}/etcdserverpb.KV/Put`, putFile)
        expect(put.body.code, put.body.stderr).toBe(0)
        expect(put.fields.get(":status"), put.text).toBe("200")
        expect(put.fields.get("grpc-status"), put.text).toBe("0")
        if (tls) expect(put.alpn, put.text).toBe(true)
        const putMessages = unframe(put.body.stdout)
        expect(putMessages).toHaveLength(1)
        const putResponse = PutResponse.decode(putMessages[0]!) as any
        const revision = Number(putResponse.header.revision)
        expect(revision).toBeGreaterThan(1)

        const rangeFile = path.join(dir, "range.bin")
        fs.writeFileSync(
          rangeFile,
          framed(RangeRequest.encode(RangeRequest.fromObject({ key: Buffer.from(key) })).finish())
        )
        const range = await nghttpCall(`${base}/etcdserverpb.KV/Range`, rangeFile)
        expect(range.body.code, range.body.stderr).toBe(0)
        expect(range.fields.get("grpc-status"), range.text).toBe("0")
        const messages = unframe(range.body.stdout)
        expect(messages).toHaveLength(1)
        const response = RangeResponse.decode(messages[0]!) as any
        expect(response.kvs).toHaveLength(1)
        expect(Buffer.from(response.kvs[0].key).toString()).toBe(key)
        expect(Buffer.from(response.kvs[0].value).toString()).toBe("hello")
        expect(Number(response.kvs[0].mod_revision)).toBe(revision)
        // and a grpc-js client reads the same
        const kv = normalClient(server, pki)
        try {
          const viaGrpc = await call(kv, "Range", { key: Buffer.from(key) })
          expect(viaGrpc.kvs[0].value.toString()).toBe("hello")
        } finally {
          kv.close()
        }
      })

      it("nghttp: an unknown method ends with grpc-status 12 (Unimplemented)", async () => {
        const file = path.join(dir, "empty.bin")
        fs.writeFileSync(file, framed(new Uint8Array(0)))
        const r = await nghttpCall(`${base}/etcdserverpb.KV/NoSuchMethod`, file)
        expect(r.fields.get("grpc-status"), r.text).toBe("12")
      })

      it("h2load: 2000 unary Puts over 4 connections (10 streams each) all succeed, and every one ran", async () => {
        const N = 2000
        const key = `h2load/${transport}/${tls}`
        const file = path.join(dir, "h2load-put.bin")
        fs.writeFileSync(
          file,
          framed(PutRequest.encode(PutRequest.fromObject({ key: Buffer.from(key), value: Buffer.from("x") })).finish())
        )
        const r = await run(H2LOAD, [
          "-n",
          String(N),
          "-c",
          "4",
          "-m",
          "10",
          "-t",
          "1",
          // -d makes h2load POST
          "-H",
          "content-type: application/grpc",
          "-H",
          "te: trailers",
          "-d",
          file,
          `${base}/etcdserverpb.KV/Put`
        ])
        const out = r.stdout.toString()
        const summary = h2loadSummary(out)
        expect(summary, `${out}\n${r.stderr}`).toBeDefined()
        expect(summary).toMatchObject({ total: N, succeeded: N, failed: 0, errored: 0 })
        if (tls) expect(summary!.protocol).toBe("h2")
        const kv = normalClient(server, pki)
        try {
          const got = await call(kv, "Range", { key: Buffer.from(key) })
          // every Put of the same key adds one version: all N calls ran, none twice
          expect(Number(got.kvs[0].version)).toBe(N)
        } finally {
          kv.close()
        }
      })
    }
  )

for (const transport of transports) {
  serverSuite(transport, false)
  serverSuite(transport, true)
}

describe.skipIf(!toolsAvailable || skipEtcd)("nghttp against etcd 3.4 (the oracle) and ours", () => {
  let etcd: EtcdProcess
  const ours: Array<HostileServer> = []
  let dir: string
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "h2-interop-etcd-"))
    etcd = await EtcdProcess.start()
    for (const t of transports) ours.push(await startHostileServer(t))
  })
  afterAll(async () => {
    await Promise.all([etcd?.dispose(), ...ours.map((s) => s.close())])
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("the same Put, Range and unknown method: the same statuses and the same response messages", async () => {
    const put = path.join(dir, "put.bin")
    fs.writeFileSync(
      put,
      framed(PutRequest.encode(PutRequest.fromObject({ key: Buffer.from("k"), value: Buffer.from("v") })).finish())
    )
    const range = path.join(dir, "range.bin")
    fs.writeFileSync(range, framed(RangeRequest.encode(RangeRequest.fromObject({ key: Buffer.from("k") })).finish()))
    const bad = path.join(dir, "bad.bin")
    fs.writeFileSync(bad, framed(new Uint8Array(0)))
    const shape = async (base: string) => {
      const p = await nghttpCall(`${base}/etcdserverpb.KV/Put`, put)
      const r = await nghttpCall(`${base}/etcdserverpb.KV/Range`, range)
      const u = await nghttpCall(`${base}/etcdserverpb.KV/NoSuchMethod`, bad)
      const kv = (RangeResponse.decode(unframe(r.body.stdout)[0]!) as any).kvs.map((x: any) => ({
        key: Buffer.from(x.key).toString(),
        value: Buffer.from(x.value).toString(),
        version: Number(x.version)
      }))
      return {
        put: {
          status: p.fields.get(":status"),
          grpcStatus: p.fields.get("grpc-status"),
          messages: unframe(p.body.stdout).length
        },
        range: { status: r.fields.get(":status"), grpcStatus: r.fields.get("grpc-status"), kv },
        unknown: { status: u.fields.get(":status"), grpcStatus: u.fields.get("grpc-status") }
      }
    }
    const theirs = await shape(etcd.clientUrl)
    for (const server of ours) {
      const mine = await shape(`http://${server.endpoint}`)
      expect({ transport: server.transport, ...mine }).toEqual({ transport: server.transport, ...theirs })
    }
    expect(theirs.range.grpcStatus).toBe("0")
  })
})
