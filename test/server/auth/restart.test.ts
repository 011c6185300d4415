/**
 * The auth store survives a restart (LMDB data dir): the enabled flag, the auth revision, users
 * with their password hashes and roles, roles with their permissions — and so a jwt issued
 * before the restart is still good after it, while simple tokens (memory only, as etcd's) are
 * not. Also our own rules that etcd 3.4 does not share with us:
 * - LeaseTimeToLive with keys needs read on every attached key (etcd 3.4.26's fix of
 *   CVE-2023-32082; 3.4.23, the oracle here, lists them to anyone);
 * - the JSON gateway's /v3/auth/* with the token in the Authorization header.
 */
import { generateKeyPairSync } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type InProcessServer, startInProcess } from "../support/in-process.js"
import { b, callAs, clientsOf, closeClients, outcome, tokenOf } from "./support.js"

const dirs: Array<string> = []
const servers: Array<InProcessServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-auth-"))
  dirs.push(d)
  return d
}

const start = async (options: Parameters<typeof startInProcess>[0]) => {
  const s = await startInProcess({ bcryptCost: 4, ...options })
  servers.push(s)
  return s
}

describe("auth store across a restart", () => {
  it("users, roles, permissions, the enabled flag and the auth revision are replayed", async () => {
    const dataDir = tmp()
    const keys = tmp()
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    fs.writeFileSync(path.join(keys, "k.pem"), privateKey.export({ format: "pem", type: "pkcs8" }) as string)
    fs.writeFileSync(path.join(keys, "k.pub"), publicKey.export({ format: "pem", type: "spki" }) as string)
    const authToken = `jwt,pub-key=${path.join(keys, "k.pub")},priv-key=${path.join(keys, "k.pem")},sign-method=ES256`

    let s = await start({ dataDir, authToken })
    let c = clientsOf(s.endpoint)
    for (const [m, req] of [
      ["UserAdd", { name: "root", password: "rootpw" }],
      ["UserGrantRole", { user: "root", role: "root" }],
      ["RoleAdd", { name: "r" }],
      ["RoleGrantPermission", { name: "r", perm: { permType: 2, key: b("/app/"), range_end: b("/app0") } }],
      ["RoleGrantPermission", { name: "r", perm: { permType: 0, key: b("cfg") } }],
      ["UserAdd", { name: "u", password: "upw" }],
      ["UserGrantRole", { user: "u", role: "r" }],
      ["AuthEnable", {}]
    ] as const) {
      expect(await outcome(c.auth, m, req), m).toBe("ok")
    }
    const before = await callAs<any>(c.auth, "AuthStatus", {})
    const jwt = await tokenOf(c, "u", "upw")
    const rootToken = await tokenOf(c, "root", "rootpw")
    const roleBefore = await callAs<any>(c.auth, "RoleGet", { role: "r" }, rootToken)
    expect(roleBefore.ok).toBe(true)
    closeClients(c)
    await s.close()

    s = await start({ dataDir, authToken })
    c = clientsOf(s.endpoint)
    try {
      const after = await callAs<any>(c.auth, "AuthStatus", {})
      expect(after.ok && after.value.enabled).toBe(true)
      expect(after.ok && before.ok && after.value.authRevision).toBe(before.ok && before.value.authRevision)
      // nobody without a credential; the old jwt still holds (same revision, same keys)
      expect(await outcome(c.kv, "Range", { key: b("cfg") })).toBe("3 etcdserver: user name is empty")
      expect(await outcome(c.kv, "Range", { key: b("cfg") }, jwt)).toBe("ok")
      expect(await outcome(c.kv, "Put", { key: b("/app/x"), value: b("1") }, jwt)).toBe("ok")
      expect(await outcome(c.kv, "Put", { key: b("cfg"), value: b("1") }, jwt)).toBe("7 etcdserver: permission denied")
      // the password hashes came back: authentication works, a wrong password does not
      expect(await outcome(c.auth, "Authenticate", { name: "u", password: "nope" })).toBe(
        "3 etcdserver: authentication failed, invalid user ID or password"
      )
      const root = await tokenOf(c, "root", "rootpw")
      const roleAfter = await callAs<any>(c.auth, "RoleGet", { role: "r" }, root)
      expect(roleAfter.ok && roleAfter.value.perm).toEqual(roleBefore.ok && roleBefore.value.perm)
      expect(roleAfter.ok && roleAfter.value.perm.length).toBe(2)
      const users = await callAs<any>(c.auth, "UserList", {}, root)
      expect(users.ok && users.value.users).toEqual(["root", "u"])
      expect(await outcome(c.auth, "RoleDelete", { role: "root" }, root)).toBe("3 etcdserver: invalid auth management")
    } finally {
      closeClients(c)
    }
  })

  it("simple tokens live in memory only: after a restart clients authenticate again", async () => {
    const dataDir = tmp()
    let s = await start({ dataDir })
    let c = clientsOf(s.endpoint)
    await callAs(c.auth, "UserAdd", { name: "root", password: "rootpw" })
    await callAs(c.auth, "UserGrantRole", { user: "root", role: "root" })
    await callAs(c.auth, "AuthEnable", {})
    const token = await tokenOf(c, "root", "rootpw")
    expect(await outcome(c.kv, "Put", { key: b("k"), value: b("v") }, token)).toBe("ok")
    closeClients(c)
    await s.close()
    s = await start({ dataDir })
    c = clientsOf(s.endpoint)
    try {
      expect(await outcome(c.kv, "Range", { key: b("k") }, token)).toBe("16 etcdserver: invalid auth token")
      expect(await outcome(c.kv, "Range", { key: b("k") }, await tokenOf(c, "root", "rootpw"))).toBe("ok")
    } finally {
      closeClients(c)
    }
  })
})

describe("LeaseTimeToLive with keys (etcd 3.4.26's rule)", () => {
  it("needs read on every attached key; without keys it needs nothing", async () => {
    const s = await start({})
    const c = clientsOf(s.endpoint)
    try {
      await callAs(c.auth, "UserAdd", { name: "root", password: "rootpw" })
      await callAs(c.auth, "UserGrantRole", { user: "root", role: "root" })
      await callAs(c.auth, "RoleAdd", { name: "r" })
      await callAs(c.auth, "RoleGrantPermission", {
        name: "r",
        perm: { permType: 2, key: b("/p/"), range_end: b("/p0") }
      })
      await callAs(c.auth, "UserAdd", { name: "u", password: "upw" })
      await callAs(c.auth, "UserGrantRole", { user: "u", role: "r" })
      await callAs(c.auth, "AuthEnable", {})
      const root = await tokenOf(c, "root", "rootpw")
      const u = await tokenOf(c, "u", "upw")
      const grant = await callAs<any>(c.lease, "LeaseGrant", { TTL: 100 }, root)
      const id = grant.ok ? grant.value.ID : ""
      expect(await outcome(c.kv, "Put", { key: b("/p/a"), value: b("1"), lease: id }, root)).toBe("ok")
      expect(await outcome(c.lease, "LeaseTimeToLive", { ID: id, keys: true }, u)).toBe("ok")
      expect(await outcome(c.kv, "Put", { key: b("secret"), value: b("1"), lease: id }, root)).toBe("ok")
      expect(await outcome(c.lease, "LeaseTimeToLive", { ID: id, keys: true }, u)).toBe(
        "7 etcdserver: permission denied"
      )
      expect(await outcome(c.lease, "LeaseTimeToLive", { ID: id, keys: true })).toBe("3 etcdserver: user name is empty")
      expect(await outcome(c.lease, "LeaseTimeToLive", { ID: id, keys: false }, u)).toBe("ok")
      expect(await outcome(c.lease, "LeaseTimeToLive", { ID: id, keys: true }, root)).toBe("ok")
    } finally {
      closeClients(c)
    }
  })
})

describe("JSON gateway /v3/auth/*", () => {
  it("administers users and roles and takes the token from the Authorization header", async () => {
    const s = await start({})
    const url = (p: string) => `http://${s.endpoint}/v3/${p}`
    const post = async (p: string, body: unknown, token?: string) => {
      const r = await fetch(url(p), {
        method: "POST",
        body: JSON.stringify(body),
        headers: token === undefined ? {} : { Authorization: token }
      })
      return { status: r.status, body: (await r.json()) as any }
    }
    expect((await post("auth/user/add", { name: "root", password: "rootpw" })).status).toBe(200)
    expect((await post("auth/user/grant", { user: "root", role: "root" })).status).toBe(200)
    expect((await post("auth/role/add", { name: "r" })).status).toBe(200)
    expect(
      (await post("auth/role/grant", { name: "r", perm: { permType: "READWRITE", key: "YQ==", range_end: "Yw==" } }))
        .status
    ).toBe(200)
    expect((await post("auth/role/get", { role: "r" })).body.perm).toEqual([
      { permType: "READWRITE", key: "YQ==", range_end: "Yw==" }
    ])
    expect((await post("auth/user/add", { name: "u", password: "upw" })).status).toBe(200)
    expect((await post("auth/user/grant", { user: "u", role: "r" })).status).toBe(200)
    expect((await post("auth/enable", {})).status).toBe(200)
    expect((await post("kv/range", { key: "YQ==" })).body).toEqual({
      error: "etcdserver: user name is empty",
      message: "etcdserver: user name is empty",
      code: 3
    })
    const token = (await post("auth/authenticate", { name: "u", password: "upw" })).body.token as string
    expect((await post("kv/put", { key: "YQ==", value: "MQ==" }, token)).status).toBe(200)
    expect((await post("kv/put", { key: "eg==", value: "MQ==" }, token)).body.code).toBe(7)
    expect((await post("auth/user/list", {}, token)).body.code).toBe(7)
    expect((await post("kv/range", { key: "YQ==" }, "bogus")).body.code).toBe(16)
    const rootToken = (await post("auth/authenticate", { name: "root", password: "rootpw" })).body.token as string
    expect((await post("auth/user/list", {}, rootToken)).body.users).toEqual(["root", "u"])
    expect((await post("auth/disable", {}, rootToken)).status).toBe(200)
    expect((await post("kv/range", { key: "YQ==" })).body.count).toBe("1")
  })
})
