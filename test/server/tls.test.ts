/**
 * Client TLS (https client URLs with etcd's flags), differential against etcd 3.4 started with the
 * same flags and certificates (made by openssl at test time, test/support/certs.ts): etcdctl 3.4
 * with --cacert/--cert/--key, the etcd3 npm client and our client over TLS and mutual TLS; the
 * refusals — no client certificate, one from a foreign CA, a client that trusts another CA, an
 * expired server certificate, a server certificate for another host, a plain-text client — end
 * the same way on both servers. Plus: the gateway and /health over TLS on the same port, the
 * metrics listener on https, ALPN-less h2, --cipher-suites/--tls-max-version, the certificate
 * reload, --auto-tls, and the start-up errors.
 */
import { Effect } from "effect"
import { Etcd3 } from "etcd3"
import * as fs from "node:fs"
import * as http2 from "node:http2"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import * as tls from "node:tls"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdClient } from "../../src/client/index.js"
import type { ClientTlsConfig } from "../../src/server/tls-config.js"
import { defaultClientTlsConfig } from "../../src/server/tls-config.js"
import { makeTestPki, type TestPki } from "../support/certs.js"
import { ETCDCTL_BIN, EtcdProcess, runCommand, skipEtcd } from "../support/etcd.js"
import { type InProcessServer, startInProcess } from "./support/in-process.js"

/** etcdctl's outcome, comparable across servers: exit code, stdout, the last stderr line. */
const etcdctl = async (endpoint: string, args: ReadonlyArray<string>) => {
  const r = await runCommand(
    ETCDCTL_BIN,
    ["--endpoints", endpoint, "--dial-timeout", "1s", "--command-timeout", "2s", ...args],
    { ETCDCTL_API: "3" }
  )
  return { code: r.code, stdout: r.stdout, error: r.stderr.trim().split("\n").pop() ?? "" }
}

interface Pair {
  readonly etcd: EtcdProcess
  readonly ours: InProcessServer
  readonly oursUrl: string
  readonly etcdUrl: string
}

const tlsArgs = (c: Partial<ClientTlsConfig>): Array<string> => [
  ...(c.certFile === undefined ? [] : ["--cert-file", c.certFile]),
  ...(c.keyFile === undefined ? [] : ["--key-file", c.keyFile]),
  ...(c.trustedCaFile === undefined ? [] : ["--trusted-ca-file", c.trustedCaFile]),
  ...(c.clientCertAuth === true ? ["--client-cert-auth"] : [])
]

/** etcd 3.4 and our server with the same TLS flags on https client URLs. */
const startPair = async (c: Partial<ClientTlsConfig>): Promise<Pair> => {
  const [etcd, ours] = await Promise.all([
    EtcdProcess.start({ clientScheme: "https", extraArgs: tlsArgs(c) }),
    startInProcess({ listenClientUrls: ["https://127.0.0.1:0"], tls: { ...defaultClientTlsConfig, ...c } })
  ])
  return { etcd, ours, etcdUrl: etcd.clientUrl, oursUrl: `https://${ours.endpoint}` }
}

const disposePair = async (p: Pair | undefined) => {
  await Promise.all([p?.etcd.dispose(), p?.ours.close()])
}

describe.skipIf(skipEtcd)("client TLS, differential against etcd 3.4", () => {
  let pki: TestPki
  let mtls: Pair
  let serverOnly: Pair

  beforeAll(async () => {
    pki = makeTestPki()
    ;[mtls, serverOnly] = await Promise.all([
      startPair({ certFile: pki.server.cert, keyFile: pki.server.key, trustedCaFile: pki.ca, clientCertAuth: true }),
      startPair({ certFile: pki.server.cert, keyFile: pki.server.key })
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([disposePair(mtls), disposePair(serverOnly)])
    pki?.dispose()
  })

  /** Runs the same etcdctl command on both servers of a pair. */
  const both = async (pair: Pair, args: (p: TestPki) => ReadonlyArray<string>) => {
    const [theirs, ours] = await Promise.all([etcdctl(pair.etcdUrl, args(pki)), etcdctl(pair.oursUrl, args(pki))])
    return { theirs, ours }
  }

  const client = (p: TestPki) => ["--cacert", p.ca, "--cert", p.client.cert, "--key", p.client.key]
  /** k = v on both servers of the mutual-TLS pair: what the tests that read "k" read, written by each itself */
  const putK = async () => {
    const put = await both(mtls, (p) => [...client(p), "put", "k", "v"])
    expect([put.theirs.code, put.ours.code]).toEqual([0, 0])
  }

  it("mutual TLS: etcdctl with --cacert/--cert/--key writes and reads on both", async () => {
    const put = await both(mtls, (p) => [...client(p), "put", "k", "v"])
    expect(put.ours).toEqual(put.theirs)
    expect(put.ours.code).toBe(0)
    const get = await both(mtls, (p) => [...client(p), "get", "k"])
    expect(get.ours).toEqual(get.theirs)
    expect(get.ours.stdout).toBe("k\nv\n")
  }, 30_000)

  it.each([
    ["no client certificate", (p: TestPki) => ["--cacert", p.ca, "get", "k"]],
    [
      "a client certificate from another CA",
      (p: TestPki) => ["--cacert", p.ca, "--cert", p.foreignClient.cert, "--key", p.foreignClient.key, "get", "k"]
    ],
    [
      "a client that trusts another CA",
      (p: TestPki) => ["--cacert", p.otherCa, "--cert", p.client.cert, "--key", p.client.key, "get", "k"]
    ],
    ["a plain-text client", (p: TestPki) => ["--cert", p.client.cert, "--key", p.client.key, "get", "k"]]
  ])(
    "--client-cert-auth refuses %s, as etcd does",
    async (_name, args) => {
      const pair = mtls
      const [theirs, ours] = await Promise.all([
        etcdctl(args(pki).includes("--cacert") ? pair.etcdUrl : pair.etcd.endpoint, args(pki)),
        etcdctl(args(pki).includes("--cacert") ? pair.oursUrl : pair.ours.endpoint, args(pki))
      ])
      expect(ours).toEqual(theirs)
      expect(ours.code).toBe(1)
      expect(ours.error).toBe("Error: context deadline exceeded")
    },
    30_000
  )

  it("--insecure-skip-tls-verify with a client certificate is accepted by both", async () => {
    await putK()
    const r = await both(mtls, (p) => [
      "--insecure-skip-tls-verify",
      "--cert",
      p.client.cert,
      "--key",
      p.client.key,
      "get",
      "k"
    ])
    expect(r.ours).toEqual(r.theirs)
    expect(r.ours.stdout).toBe("k\nv\n")
  }, 30_000)

  it("server TLS only: any client that trusts the CA gets in, with or without a certificate", async () => {
    const plain = await both(serverOnly, (p) => ["--cacert", p.ca, "put", "a", "1"])
    expect(plain.ours).toEqual(plain.theirs)
    expect(plain.ours.code).toBe(0)
    const withCert = await both(serverOnly, (p) => [...client(p), "get", "a", "--print-value-only"])
    expect(withCert.ours).toEqual(withCert.theirs)
    expect(withCert.ours.stdout).toBe("1\n")
  }, 30_000)

  it.each([
    ["an expired server certificate", (p: TestPki) => p.expired],
    ["a server certificate for another host", (p: TestPki) => p.wrongHost]
  ])(
    "a client refuses %s from either server",
    async (_name, cert) => {
      const pair = await startPair({ certFile: cert(pki).cert, keyFile: cert(pki).key })
      try {
        const r = await both(pair, (p) => ["--cacert", p.ca, "get", "k"])
        expect(r.ours).toEqual(r.theirs)
        expect(r.ours.code).toBe(1)
        // and the etcd3 npm client and ours are refused too
        for (const url of [pair.etcdUrl, pair.oursUrl]) {
          await expect(etcd3Get(url, pki, false)).rejects.toThrow()
          await expect(ourGet(url, { ca: fs.readFileSync(pki.ca) })).rejects.toThrow()
        }
      } finally {
        await disposePair(pair)
      }
    },
    60_000
  )

  const etcd3Get = async (url: string, p: TestPki, withCert: boolean) => {
    const c = new Etcd3({
      hosts: url,
      credentials: {
        rootCertificate: fs.readFileSync(p.ca),
        ...(withCert ? { privateKey: fs.readFileSync(p.client.key), certChain: fs.readFileSync(p.client.cert) } : {})
      },
      dialTimeout: 1000
    })
    try {
      await c.put("etcd3").value("yes").exec()
      return await c.get("etcd3").string()
    } finally {
      c.close()
    }
  }

  const ourGet = (url: string, t: { ca?: Buffer; cert?: Buffer; key?: Buffer; insecureSkipVerify?: boolean }) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* EtcdClient
        yield* c.kv.put("ours", "yes")
        const r = yield* c.kv.get("ours")
        return Buffer.from(r.kvs[0]!.value).toString()
      }).pipe(
        Effect.provide(
          EtcdClient.layer({ endpoints: [url], dialTimeout: "1 second", requestTimeout: "3 seconds", tls: t })
        )
      )
    )

  it("the etcd3 npm client over mutual TLS on both; refused without its certificate on both", async () => {
    for (const url of [mtls.etcdUrl, mtls.oursUrl]) {
      expect(await etcd3Get(url, pki, true)).toBe("yes")
      await expect(etcd3Get(url, pki, false)).rejects.toThrow()
    }
  }, 30_000)

  it("our client over mutual TLS on both; refused without its certificate on both", async () => {
    const creds = {
      ca: fs.readFileSync(pki.ca),
      cert: fs.readFileSync(pki.client.cert),
      key: fs.readFileSync(pki.client.key)
    }
    for (const url of [mtls.etcdUrl, mtls.oursUrl]) {
      expect(await ourGet(url, creds)).toBe("yes")
      await expect(ourGet(url, { ca: creds.ca })).rejects.toThrow()
      expect(await ourGet(url, { cert: creds.cert, key: creds.key, insecureSkipVerify: true })).toBe("yes")
    }
  }, 30_000)

  it("our command line with --cacert/--cert/--key prints what etcdctl prints", async () => {
    const { ensureBuilt } = await import("./support/process.js")
    await ensureBuilt()
    await putK()
    const args = [...client(pki), "get", "k"]
    const [ours, theirs] = await Promise.all([
      runCommand("node", ["dist/cli/main.js", "get", "k", ...client(pki), "--endpoints", mtls.oursUrl]),
      runCommand(ETCDCTL_BIN, ["--endpoints", mtls.oursUrl, ...args], { ETCDCTL_API: "3" })
    ])
    expect(ours.stdout).toBe(theirs.stdout)
    expect(ours.code).toBe(0)
    expect(ours.stderr).toBe("")
    const skip = await runCommand("node", [
      "dist/cli/main.js",
      "get",
      "k",
      "--print-value-only",
      "--endpoints",
      mtls.oursUrl,
      "--insecure-skip-tls-verify",
      "--cert",
      pki.client.cert,
      "--key",
      pki.client.key
    ])
    expect(skip.stdout).toBe("v\n")
    const refused = await runCommand("node", [
      "dist/cli/main.js",
      "get",
      "k",
      "--endpoints",
      mtls.oursUrl,
      "--cacert",
      pki.ca,
      "--dial-timeout",
      "1s"
    ])
    expect(refused.code).toBe(1)
  }, 240_000)

  it("the JSON gateway and /health answer over TLS on the client port, as etcd's", async () => {
    await putK()
    const agent = new https.Agent({
      ca: fs.readFileSync(pki.ca),
      cert: fs.readFileSync(pki.client.cert),
      key: fs.readFileSync(pki.client.key)
    })
    const request = (url: string, body?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = https.request(url, { agent, method: body === undefined ? "GET" : "POST" }, (res) => {
          let text = ""
          res.on("data", (c) => (text += c))
          res.on("end", () => resolve({ status: res.statusCode!, body: text }))
        })
        req.on("error", reject)
        req.end(body)
      })
    for (const base of [mtls.etcdUrl, mtls.oursUrl]) {
      const health = await request(`${base}/health`)
      expect(health.status).toBe(200)
      expect(JSON.parse(health.body)).toMatchObject({ health: "true" })
      const range = await request(`${base}/v3/kv/range`, JSON.stringify({ key: Buffer.from("k").toString("base64") }))
      expect(range.status).toBe(200)
      expect(JSON.parse(range.body).kvs[0].value).toBe(Buffer.from("v").toString("base64"))
    }
    agent.destroy()
  }, 30_000)

  it("gRPC without ALPN (h2 preface sniffed after the handshake) is served", async () => {
    // a TLS connection that negotiates no protocol, then speaks HTTP/2 prior knowledge
    const session = http2.connect(mtls.oursUrl, {
      createConnection: () =>
        tls.connect({
          host: "127.0.0.1",
          port: Number(new URL(mtls.oursUrl).port),
          ca: fs.readFileSync(pki.ca),
          cert: fs.readFileSync(pki.client.cert),
          key: fs.readFileSync(pki.client.key)
        })
    })
    try {
      const status = await new Promise<string | undefined>((resolve, reject) => {
        const req = session.request({
          ":method": "POST",
          ":path": "/etcdserverpb.Maintenance/Status",
          "content-type": "application/grpc",
          te: "trailers"
        })
        req.on("trailers", (t) => resolve(String(t["grpc-status"])))
        req.on("error", reject)
        req.end(Buffer.from([0, 0, 0, 0, 0]))
        req.resume()
      })
      expect(status).toBe("0")
    } finally {
      session.close()
    }
  }, 30_000)
})

describe("client TLS on our server alone", () => {
  let pki: TestPki
  beforeAll(() => {
    pki = makeTestPki()
  })
  afterAll(() => pki?.dispose())

  const base = (): ClientTlsConfig => ({
    ...defaultClientTlsConfig,
    certFile: pki.server.cert,
    keyFile: pki.server.key
  })

  const peerSubject = (port: number, options: tls.ConnectionOptions = {}) =>
    new Promise<{ cn: string | undefined; cipher: string; version: string | null }>((resolve, reject) => {
      const s = tls.connect(
        { host: "127.0.0.1", port, ca: fs.readFileSync(pki.ca), ALPNProtocols: ["h2"], ...options },
        () => {
          const r = {
            cn: String(s.getPeerCertificate().subject?.CN),
            cipher: s.getCipher().standardName,
            version: s.getProtocol()
          }
          s.destroy()
          resolve(r)
        }
      )
      s.on("error", reject)
    })

  it("a renewed certificate is served to the next connection, without a restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-reload-"))
    const cert = path.join(dir, "cert.pem")
    const key = path.join(dir, "key.pem")
    fs.copyFileSync(pki.server.cert, cert)
    fs.copyFileSync(pki.server.key, key)
    const srv = await startInProcess({
      listenClientUrls: ["https://127.0.0.1:0"],
      tls: { ...defaultClientTlsConfig, certFile: cert, keyFile: key }
    })
    try {
      const port = srv.server.port
      expect((await peerSubject(port)).cn).toBe("server")
      // rename over the old files, as cert-manager and kubelet rotate them
      fs.copyFileSync(pki.server2.cert, `${cert}.new`)
      fs.copyFileSync(pki.server2.key, `${key}.new`)
      fs.renameSync(`${key}.new`, key)
      fs.renameSync(`${cert}.new`, cert)
      expect((await peerSubject(port)).cn).toBe("server-reloaded")
      // a broken file keeps the last good certificate
      fs.writeFileSync(cert, "not a certificate")
      expect((await peerSubject(port)).cn).toBe("server-reloaded")
    } finally {
      await srv.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("--cipher-suites limits TLS 1.2 to those suites; --tls-max-version TLS1.2 turns 1.3 off", async () => {
    const srv = await startInProcess({
      listenClientUrls: ["https://127.0.0.1:0"],
      tls: { ...base(), cipherSuites: ["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"], maxVersion: "TLS1.2" }
    })
    try {
      const r = await peerSubject(srv.server.port)
      expect(r.version).toBe("TLSv1.2")
      expect(r.cipher).toBe("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384")
      await expect(
        peerSubject(srv.server.port, { ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256", maxVersion: "TLSv1.2" })
      ).rejects.toThrow()
    } finally {
      await srv.close()
    }
  })

  it("--tls-min-version TLS1.3 refuses a TLS 1.2 client", async () => {
    const srv = await startInProcess({
      listenClientUrls: ["https://127.0.0.1:0"],
      tls: { ...base(), minVersion: "TLS1.3" }
    })
    try {
      expect((await peerSubject(srv.server.port)).version).toBe("TLSv1.3")
      await expect(peerSubject(srv.server.port, { maxVersion: "TLSv1.2" })).rejects.toThrow()
    } finally {
      await srv.close()
    }
  })

  it("the metrics listener serves https with the client certificate", async () => {
    const srv = await startInProcess({
      listenClientUrls: ["https://127.0.0.1:0"],
      listenMetricsUrls: ["https://127.0.0.1:0"],
      tls: { ...base(), trustedCaFile: pki.ca, clientCertAuth: true }
    })
    try {
      const url = srv.server.metricsUrls[0]!
      expect(url.startsWith("https://")).toBe(true)
      const get = (withCert: boolean) =>
        new Promise<number>((resolve, reject) => {
          https
            .get(
              `${url}/metrics`,
              {
                ca: fs.readFileSync(pki.ca),
                ...(withCert ? { cert: fs.readFileSync(pki.client.cert), key: fs.readFileSync(pki.client.key) } : {})
              },
              (res) => {
                res.resume()
                resolve(res.statusCode!)
              }
            )
            .on("error", reject)
        })
      expect(await get(true)).toBe(200)
      await expect(get(false)).rejects.toThrow()
    } finally {
      await srv.close()
    }
  })

  it("--auto-tls makes a self-signed certificate in <data-dir>/fixtures/client and reuses it", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-autotls-"))
    try {
      const fingerprint = async () => {
        const srv = await startInProcess({
          dataDir,
          listenClientUrls: ["https://127.0.0.1:0"],
          tls: { ...defaultClientTlsConfig, autoTls: true }
        })
        try {
          return await new Promise<string>((resolve, reject) => {
            const s = tls.connect({ host: "127.0.0.1", port: srv.server.port, rejectUnauthorized: false }, () => {
              const c = s.getPeerCertificate()
              expect(c.subject.O).toBe("etcd")
              expect(c.subjectaltname).toContain("IP Address:127.0.0.1")
              s.destroy()
              resolve(c.fingerprint256)
            })
            s.on("error", reject)
          })
        } finally {
          await srv.close()
        }
      }
      const first = await fingerprint()
      expect(fs.existsSync(path.join(dataDir, "fixtures/client/cert.pem"))).toBe(true)
      expect(await fingerprint()).toBe(first)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it.each([
    [
      { listenClientUrls: ["https://127.0.0.1:0"] },
      "TLS key/cert (--cert-file, --key-file) must be provided for client url https://127.0.0.1:0 with HTTPS scheme"
    ],
    [
      {
        listenClientUrls: ["https://127.0.0.1:0"],
        tls: { ...defaultClientTlsConfig, certFile: "/nonexistent.pem", keyFile: "/nonexistent-key.pem" }
      },
      "error loading TLS key pair"
    ],
    [
      {
        listenClientUrls: ["https://127.0.0.1:0"],
        tls: {
          ...defaultClientTlsConfig,
          certFile: "/x",
          keyFile: "/y",
          minVersion: "TLS1.3" as const,
          cipherSuites: ["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"]
        }
      },
      "cipher suites cannot be configured when only TLS1.3 or greater is supported"
    ]
  ])("start-up error: %j", async (options, message) => {
    await expect(startInProcess(options)).rejects.toThrow(message)
  })
})
