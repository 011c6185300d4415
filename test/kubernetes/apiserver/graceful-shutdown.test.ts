/**
 * The apiserver's graceful termination (src/kubernetes/apiserver/graceful-shutdown.ts): closing its
 * scope (what SIGTERM does to `etcd-effect apiserver`) ends every watch cleanly, refuses new
 * connections, and answers and stores a write that was in flight; past the shutdown timeout what
 * is still open is closed.
 */
import { Duration } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { configMap, newNamespace, request, startApiServer, until } from "./support.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/** a watch whose end says whether the server finished the response (its terminating chunk) */
const rawWatch = (url: string) =>
  new Promise<{ readonly end: Promise<{ complete: boolean; error?: string }> }>((resolve, reject) => {
    const req = http.get(url, (res) => {
      res.resume()
      const end = new Promise<{ complete: boolean; error?: string }>((done) => {
        res.on("end", () => done({ complete: res.complete }))
        res.on("error", (e) => done({ complete: false, error: String(e) }))
        res.on("aborted", () => done({ complete: false, error: "aborted" }))
      })
      resolve({ end })
    })
    req.on("error", reject)
  })

/**
 * a POST whose body is sent in two parts: the request is in flight until `finish`. `received`: the
 * server has its headers (it answered `Expect: 100-continue`, which Node's server does just before
 * handing the request to its handler)
 */
const halfSentPost = (url: string, body: string) => {
  const bytes = Buffer.from(body)
  const req = http.request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": bytes.length, expect: "100-continue" }
  })
  const received = new Promise<void>((resolve) => req.once("continue", resolve))
  const answer = new Promise<{ status: number; connection: string | undefined; body: any }>((resolve, reject) => {
    req.on("response", (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) })
      )
    })
    req.on("error", reject)
  })
  req.write(bytes.subarray(0, 10))
  return { answer, received, finish: () => req.end(bytes.subarray(10)) }
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, "127.0.0.1")
    s.on("connect", () => {
      s.destroy()
      resolve(false)
    })
    s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"))
  })

describe("apiserver: graceful shutdown", () => {
  it("ends watches cleanly, refuses new connections, answers and stores the write in flight", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "apiserver-shutdown-"))
    dirs.push(dataDir)
    const server = await startApiServer({ dataDir })
    const ns = await newNamespace(server.url)
    const collection = `/api/v1/namespaces/${ns}/configmaps`
    const w = await rawWatch(`${server.url}${collection}?watch=1`)
    const post = halfSentPost(`${server.url}${collection}`, JSON.stringify(configMap("in-flight", { a: "1" })))
    await post.received
    const closed = server.close()
    await until(() => refused(server.running.port))
    expect(await w.end).toEqual({ complete: true })
    post.finish()
    const answer = await post.answer
    expect(answer.status).toBe(201)
    expect(answer.body.metadata.name).toBe("in-flight")
    expect(answer.connection).toBe("close")
    await closed

    const again = await startApiServer({ dataDir })
    try {
      const got = await request(again.url, "GET", `${collection}/in-flight`)
      expect(got.status).toBe(200)
      expect(got.body.data).toEqual({ a: "1" })
    } finally {
      await again.close()
    }
  })

  it("closes what is still open once the shutdown timeout has passed", async () => {
    const server = await startApiServer({ shutdownTimeout: Duration.zero })
    const ns = await newNamespace(server.url)
    const post = halfSentPost(`${server.url}/api/v1/namespaces/${ns}/configmaps`, JSON.stringify(configMap("cut")))
    const outcome = post.answer.then(
      (a) => `answered ${a.status}`,
      (e: unknown) => String(e)
    )
    await post.received
    await server.close()
    expect(await outcome).toMatch(/socket hang up|ECONNRESET/)
  })
})
