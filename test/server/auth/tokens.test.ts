/**
 * Credentials on our server and etcd 3.4 side by side, through raw gRPC:
 * - simple tokens expire after --auth-token-ttl without use;
 * - a token sent while auth is disabled is refused ("invalid auth token"), and Maintenance answers
 *   the raw "auth: invalid auth token" (code Unknown);
 * - jwt tokens (RS256 and ES256 keys from PEM files) carry etcd's claims, and a change of the auth
 *   store makes them "revision of auth store is old".
 */
import { generateKeyPairSync } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { EtcdProcess, requireEtcd, skipEtcd } from "../../support/etcd.js"
import { type InProcessServer, sleep, startInProcess } from "../support/in-process.js"
import { type AuthClients, b, callAs, clientsOf, closeClients, outcome, tokenOf } from "./support.js"

const skip = skipEtcd && !requireEtcd

const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const f of cleanups.reverse()) await f()
})

/** etcd and our server started with the same auth flags; root set up and auth enabled on both */
const pair = async (etcdArgs: ReadonlyArray<string>, ours: Parameters<typeof startInProcess>[0]) => {
  const [e, o] = await Promise.all([
    EtcdProcess.start({ extraArgs: ["--bcrypt-cost", "4", ...etcdArgs] }),
    startInProcess({ bcryptCost: 4, ...ours })
  ])
  cleanups.push(
    () => e.dispose(),
    () => o.close()
  )
  const targets = [clientsOf(e.endpoint), clientsOf(o.endpoint)]
  cleanups.push(() => targets.forEach(closeClients))
  for (const c of targets) {
    await callAs(c.auth, "UserAdd", { name: "root", password: "rootpw" })
    await callAs(c.auth, "UserGrantRole", { user: "root", role: "root" })
    await callAs(c.auth, "RoleAdd", { name: "reader" })
    await callAs(c.auth, "RoleGrantPermission", {
      name: "reader",
      perm: { permType: 0, key: b("a"), range_end: b("z") }
    })
    await callAs(c.auth, "UserAdd", { name: "u", password: "upw" })
    await callAs(c.auth, "UserGrantRole", { user: "u", role: "reader" })
    const r = await callAs(c.auth, "AuthEnable", {})
    if (!r.ok) throw new Error(`AuthEnable: ${r.details}`)
  }
  return { etcd: e, ours: o as InProcessServer, targets }
}

/** the same calls on both; their outcomes */
const both = (targets: ReadonlyArray<AuthClients>, f: (c: AuthClients) => Promise<string>) =>
  Promise.all(targets.map(f))

const keysDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-jwt-"))
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

describe.skipIf(skip)("tokens", () => {
  it("a simple token unused for longer than --auth-token-ttl is invalid; a token with auth disabled is refused", async () => {
    const { targets } = await pair(["--auth-token-ttl", "1"], { authTokenTtl: 1 })
    const tokens = await Promise.all(targets.map((c) => tokenOf(c, "u", "upw")))
    // etcd's TTL keeper looks each second: 3 s is past any token's end on both
    await sleep(3000)
    const expired = await Promise.all(targets.map((c, i) => outcome(c.kv, "Range", { key: b("a") }, tokens[i])))
    expect(expired).toEqual(["16 etcdserver: invalid auth token", "16 etcdserver: invalid auth token"])

    const root = await Promise.all(targets.map((c) => tokenOf(c, "root", "rootpw")))
    expect(await Promise.all(targets.map((c, i) => outcome(c.auth, "AuthDisable", {}, root[i])))).toEqual(["ok", "ok"])
    for (const [method, req] of [
      ["Range", { key: b("a") }],
      ["Put", { key: b("a"), value: b("1") }],
      ["Compact", { revision: 1 }]
    ] as const) {
      const r = await both(targets, (c) => outcome(c.kv, method, req, "bogus.1"))
      expect(r[1], method).toEqual(r[0])
      expect(r[0]).toBe("16 etcdserver: invalid auth token")
    }
    const lease = await both(targets, (c) => outcome(c.lease, "LeaseGrant", { TTL: 10 }, "bogus"))
    expect(lease[1]).toEqual(lease[0])
    const defrag = await both(targets, (c) => outcome(c.maintenance, "Defragment", {}, "bogus"))
    expect(defrag).toEqual(["2 auth: invalid auth token", "2 auth: invalid auth token"])
    const plain = await both(targets, (c) => outcome(c.kv, "Range", { key: b("a") }))
    expect(plain).toEqual(["ok", "ok"])
    const authenticate = await both(targets, (c) => outcome(c.auth, "Authenticate", { name: "u", password: "upw" }))
    expect(authenticate).toEqual([
      "9 etcdserver: authentication is not enabled",
      "9 etcdserver: authentication is not enabled"
    ])
  })

  for (const method of ["RS256", "ES256"] as const) {
    it(`jwt ${method}: etcd's claims; a token of an older auth revision is refused`, async () => {
      const dir = keysDir()
      const pair_ =
        method === "RS256"
          ? generateKeyPairSync("rsa", { modulusLength: 2048 })
          : generateKeyPairSync("ec", { namedCurve: "P-256" })
      const priv = path.join(dir, "key.pem")
      const pub = path.join(dir, "key.pub.pem")
      fs.writeFileSync(
        priv,
        pair_.privateKey.export({ format: "pem", type: method === "RS256" ? "pkcs1" : "sec1" }) as string
      )
      fs.writeFileSync(pub, pair_.publicKey.export({ format: "pem", type: "spki" }) as string)
      const opt = `jwt,pub-key=${pub},priv-key=${priv},sign-method=${method},ttl=5m`
      const { targets } = await pair(["--auth-token", opt], { authToken: opt })

      const tokens = await Promise.all(targets.map((c) => tokenOf(c, "u", "upw")))
      const claims = tokens.map((t) => {
        const [h, p] = t.split(".")
        return {
          header: JSON.parse(Buffer.from(h!, "base64url").toString()),
          payload: Object.keys(JSON.parse(Buffer.from(p!, "base64url").toString())).sort()
        }
      })
      expect(claims[1]).toEqual(claims[0])
      expect(claims[0]!.payload).toEqual(["exp", "revision", "username"])
      expect(claims[0]!.header.alg).toBe(method)

      const ok = await Promise.all(targets.map((c, i) => outcome(c.kv, "Range", { key: b("a") }, tokens[i])))
      expect(ok).toEqual(["ok", "ok"])
      const denied = await Promise.all(
        targets.map((c, i) => outcome(c.kv, "Put", { key: b("a"), value: b("1") }, tokens[i]))
      )
      expect(denied).toEqual(["7 etcdserver: permission denied", "7 etcdserver: permission denied"])

      // any change of users or roles moves the auth revision on
      const root = await Promise.all(targets.map((c) => tokenOf(c, "root", "rootpw")))
      expect(await Promise.all(targets.map((c, i) => outcome(c.auth, "RoleAdd", { name: "other" }, root[i])))).toEqual([
        "ok",
        "ok"
      ])
      const old = await Promise.all(targets.map((c, i) => outcome(c.kv, "Range", { key: b("a") }, tokens[i])))
      expect(old).toEqual([
        "3 etcdserver: revision of auth store is old",
        "3 etcdserver: revision of auth store is old"
      ])
      const fresh = await Promise.all(
        targets.map(async (c) => outcome(c.kv, "Range", { key: b("a") }, await tokenOf(c, "u", "upw")))
      )
      expect(fresh).toEqual(["ok", "ok"])
      const forged = await both(targets, (c) =>
        outcome(c.kv, "Range", { key: b("a") }, tokens[0]!.slice(0, -4) + "AAAA")
      )
      expect(forged[1]).toEqual(forged[0])
    })
  }
})
