/**
 * With TLS and --client-cert-auth, a call that sends no token is the user its client certificate
 * names (its CN), as etcd 3.4 does: the same etcdctl commands, with a certificate for "client" and
 * no --user, are allowed and refused alike on our server and on etcd 3.4 started with the same flags.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultClientTlsConfig } from "../../../src/server/tls-config.js"
import { makeTestPki, type TestPki } from "../../support/certs.js"
import { ETCDCTL_BIN, EtcdProcess, runCommand, skipEtcd } from "../../support/etcd.js"
import { type InProcessServer, startInProcess } from "../support/in-process.js"

const etcdctl = async (url: string, pki: TestPki, args: ReadonlyArray<string>) => {
  const r = await runCommand(
    ETCDCTL_BIN,
    [
      "--endpoints",
      url,
      "--dial-timeout",
      "2s",
      "--command-timeout",
      "5s",
      "--cacert",
      pki.ca,
      "--cert",
      pki.client.cert,
      "--key",
      pki.client.key,
      ...args
    ],
    { ETCDCTL_API: "3" }
  )
  return { code: r.code, stdout: r.stdout, error: r.code === 0 ? "" : (r.stderr.trim().split("\n").pop() ?? "") }
}

describe.skipIf(skipEtcd)("the client certificate's CN as the user (TLS + auth), differential against etcd 3.4", () => {
  let pki: TestPki
  let etcd: EtcdProcess
  let ours: InProcessServer
  const urls = () => [etcd.clientUrl, `https://${ours.endpoint}`] as const

  beforeAll(async () => {
    pki = makeTestPki()
    const tls = { certFile: pki.server.cert, keyFile: pki.server.key, trustedCaFile: pki.ca, clientCertAuth: true }
    ;[etcd, ours] = await Promise.all([
      EtcdProcess.start({
        clientScheme: "https",
        extraArgs: [
          "--cert-file",
          tls.certFile,
          "--key-file",
          tls.keyFile,
          "--trusted-ca-file",
          tls.trustedCaFile,
          "--client-cert-auth"
        ]
      }),
      startInProcess({ listenClientUrls: ["https://127.0.0.1:0"], tls: { ...defaultClientTlsConfig, ...tls } })
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([etcd?.dispose(), ours?.close()])
    pki?.dispose()
  })

  /** the same command on both; returns both outcomes after checking they are equal */
  const both = async (args: ReadonlyArray<string>) => {
    const [theirs, mine] = await Promise.all(urls().map((u) => etcdctl(u, pki, args)))
    expect(mine, `etcdctl ${args.join(" ")}`).toEqual(theirs)
    return mine!
  }

  it("no token: the certificate's user's permissions apply; a token still wins", async () => {
    for (const setup of [
      ["user", "add", "root:rootpw"],
      ["role", "add", "app"],
      ["role", "grant-permission", "app", "readwrite", "/cn/", "--prefix"],
      ["user", "add", "client:clientpw"],
      ["user", "grant-role", "client", "app"],
      ["user", "add", "other:otherpw"],
      ["auth", "enable"]
    ]) {
      expect((await both(setup)).code).toBe(0)
    }
    expect(await both(["put", "/cn/a", "1"])).toMatchObject({ code: 0, stdout: "OK\n" })
    expect((await both(["get", "/cn/a", "--print-value-only"])).stdout).toBe("1\n")
    const denied = await both(["put", "/elsewhere", "1"])
    expect(denied.code).not.toBe(0)
    expect(denied.error).toContain("permission denied")
    // a user given with --user is that user, whatever the certificate says
    const asOther = await both(["--user", "other:otherpw", "put", "/cn/b", "1"])
    expect(asOther.code).not.toBe(0)
    expect(asOther.error).toContain("permission denied")
    expect((await both(["--user", "root:rootpw", "put", "/elsewhere", "1"])).code).toBe(0)
    expect((await both(["--user", "root:rootpw", "auth", "disable"])).code).toBe(0)
  })
})
