/**
 * The apiserver's TLS on both sides: `--tls-cert-file`/`--tls-private-key-file` serve HTTPS (a
 * client that trusts the CA lists and watches; plain HTTP is not served there), and
 * `--etcd-servers https://…` with `--etcd-cafile/--etcd-certfile/--etcd-keyfile` reaches an etcd
 * that demands client certificates (our server with --client-cert-auth); without them it cannot.
 */
import * as fs from "node:fs"
import * as https from "node:https"
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serve } from "../../../src/kubernetes/apiserver/server.js"
import { defaultClientTlsConfig } from "../../../src/server/tls-config.js"
import { makeTestPki, type TestPki } from "../../support/certs.js"
import { type InProcessServer, startInProcess } from "../../server/support/in-process.js"
import { startApiServer, type TestApiServer } from "./support.js"

const get = (url: string, ca: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    https
      .get(url, { ca }, (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => (body += c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      })
      .on("error", reject)
  })

/** the first `n` lines of a watch, then the request is dropped */
const watchLines = (url: string, ca: string, n: number): Promise<Array<any>> =>
  new Promise((resolve, reject) => {
    const req = https.get(url, { ca }, (res) => {
      let buf = ""
      const lines: Array<any> = []
      res.setEncoding("utf8")
      res.on("data", (c: string) => {
        buf += c
        let i: number
        while ((i = buf.indexOf("\n")) >= 0) {
          lines.push(JSON.parse(buf.slice(0, i)))
          buf = buf.slice(i + 1)
          if (lines.length === n) {
            req.destroy()
            resolve(lines)
          }
        }
      })
    })
    req.on("error", (e) => (e.message.includes("socket hang up") ? undefined : reject(e)))
  })

describe("apiserver TLS: HTTPS for clients, mutual TLS to etcd", () => {
  let pki: TestPki
  let etcd: InProcessServer
  let api: TestApiServer

  beforeAll(async () => {
    pki = makeTestPki()
    etcd = await startInProcess({
      listenClientUrls: ["https://127.0.0.1:0"],
      tls: {
        ...defaultClientTlsConfig,
        certFile: pki.server.cert,
        keyFile: pki.server.key,
        trustedCaFile: pki.ca,
        clientCertAuth: true
      }
    })
    api = await startApiServer({
      etcdServers: [`https://${etcd.endpoint}`],
      etcdCafile: pki.ca,
      etcdCertfile: pki.client.cert,
      etcdKeyfile: pki.client.key,
      tlsCertFile: pki.server.cert,
      tlsPrivateKeyFile: pki.server.key
    })
  }, 60_000)
  afterAll(async () => {
    await api?.close()
    await etcd?.close()
    pki?.dispose()
  })

  it("serves HTTPS with its certificate, over an etcd reached with client certificates", async () => {
    expect(api.url.startsWith("https://")).toBe(true)
    const ca = fs.readFileSync(pki.ca, "utf8")
    const created = await new Promise<number>((resolve, reject) => {
      const req = https.request(
        `${api.url}/api/v1/namespaces/default/configmaps`,
        { method: "POST", ca, headers: { "content-type": "application/json" } },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        }
      )
      req.on("error", reject)
      req.end(JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "over-tls" }, data: { a: "1" } }))
    })
    expect(created).toBe(201)
    const list = await get(`${api.url}/api/v1/namespaces/default/configmaps`, ca)
    expect(list.status).toBe(200)
    expect(JSON.parse(list.body).items.map((o: any) => o.metadata.name)).toContain("over-tls")
    const [first] = await watchLines(`${api.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0`, ca, 1)
    expect(first).toMatchObject({ type: "ADDED", object: { metadata: { name: "over-tls" } } })
    // a client that does not trust the CA is refused at the handshake
    await expect(get(`${api.url}/version`, fs.readFileSync(pki.otherCa, "utf8"))).rejects.toThrow()
  })

  it("without --etcd-certfile/--etcd-keyfile the etcd that demands a client certificate cannot be reached", async () => {
    const scope = Effect.runSync(Scope.make())
    const exit = await Effect.runPromiseExit(
      Scope.extend(
        serve({ port: 0, etcdServers: [`https://${etcd.endpoint}`], etcdCafile: pki.ca }).pipe(
          Effect.timeout("8 seconds"),
          Logger.withMinimumLogLevel(LogLevel.None)
        ),
        scope
      )
    )
    await Effect.runPromise(Scope.close(scope, Exit.void))
    expect(Exit.isFailure(exit)).toBe(true)
  })
})
