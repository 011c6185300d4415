/**
 * The Auth service's answers through raw gRPC on our server and etcd 3.4 side by side, for what
 * etcdctl never sends or checks itself: empty names, the virtual root role (granted without a
 * record, absent from RoleList until added), permission types beyond READWRITE, the order in
 * which grants on one key are kept, the self rules of UserGet/RoleGet, admin calls without a
 * user, and the answers once auth is on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, requireEtcd, skipEtcd } from "../../support/etcd.js"
import { type InProcessServer, startInProcess } from "../support/in-process.js"
import { type AuthClients, b, callAs, clientsOf, closeClients, tokenOf } from "./support.js"

/** a response without its header (ids and revisions differ by nature), or the error */
const answer = async (c: AuthClients, method: string, req: unknown, token?: string) => {
  const r = await callAs<Record<string, unknown>>(c.auth, method, req, token)
  if (!r.ok) return `${r.code} ${r.details}`
  const { header: _h, ...rest } = r.value
  return rest
}

// two steps of one story: "once auth is on" enables auth after "while auth is off"; a shuffled run
// keeps their order (shuffle: false)
describe.skipIf(skipEtcd && !requireEtcd)("Auth rpcs: etcd-effect answers as etcd 3.4 does", { shuffle: false }, () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  let targets: Array<AuthClients> = []

  beforeAll(async () => {
    const [e, o] = await Promise.all([
      EtcdProcess.start({ extraArgs: ["--bcrypt-cost", "4"] }),
      startInProcess({ bcryptCost: 4 })
    ])
    etcd = e
    ours = o
    targets = [clientsOf(etcd.endpoint), clientsOf(ours.endpoint)]
  })
  afterAll(async () => {
    targets.forEach(closeClients)
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  /** the same call on both: equal answers; returns etcd's */
  const same = async (method: string, req: unknown, tokens?: ReadonlyArray<string | undefined>) => {
    const [theirs, mine] = await Promise.all(targets.map((c, i) => answer(c, method, req, tokens?.[i])))
    expect(mine, `${method} ${JSON.stringify(req)}`).toEqual(theirs)
    return theirs
  }

  it("while auth is off", async () => {
    await same("UserAdd", { name: "", password: "x" })
    await same("UserAdd", { name: "u1", password: "pw1" })
    await same("UserAdd", { name: "u1", password: "x" })
    await same("UserAdd", { name: "empty", password: "" })
    await same("UserAdd", { name: "cn", options: { no_password: true } })
    await same("RoleAdd", { name: "" })
    await same("RoleAdd", { name: "r2" })
    for (const perm of [
      { permType: 1, key: b("a"), range_end: b("c") },
      { permType: 2, key: b("a"), range_end: b("b") },
      { permType: 0, key: b("a") },
      { permType: 7, key: b("a") },
      { permType: 0, key: b("a"), range_end: b("b") },
      { permType: 0, key: b(""), range_end: b("") },
      { permType: 2, key: b("\0"), range_end: b("\0") }
    ])
      await same("RoleGrantPermission", { name: "r2", perm })
    expect(await same("RoleGet", { role: "r2" })).toHaveProperty("perm")
    await same("RoleRevokePermission", { role: "r2", key: b("a"), range_end: b("b") })
    await same("RoleRevokePermission", { role: "r2", key: b("a"), range_end: b("b") })
    await same("RoleGet", { role: "r2" })
    await same("RoleGet", { role: "root" })
    await same("UserGrantRole", { user: "u1", role: "r2" })
    await same("UserGrantRole", { user: "u1", role: "root" })
    await same("UserGet", { name: "u1" })
    await same("UserRevokeRole", { name: "u1", role: "root" })
    await same("RoleList", {})
    await same("RoleDelete", { role: "r2" })
    await same("UserGet", { name: "u1" })
    for (const [m, req] of [
      ["UserDelete", { name: "" }],
      ["UserGet", { name: "" }],
      ["RoleGet", { role: "" }],
      ["RoleDelete", { role: "" }],
      ["UserChangePassword", { name: "", password: "x" }],
      ["UserRevokeRole", { name: "u1", role: "r9" }],
      ["UserGrantRole", { user: "nope", role: "root" }],
      ["Authenticate", { name: "u1", password: "pw1" }],
      ["AuthEnable", {}],
      ["AuthDisable", {}]
    ] as const)
      await same(m, req)
    await same("UserList", {})
    await same("UserAdd", { name: "root", password: "rootpw" })
    await same("AuthEnable", {})
    await same("UserGrantRole", { user: "root", role: "root" })
    await same("RoleList", {})
    await same("AuthEnable", {})
  })

  it("once auth is on", async () => {
    for (const [m, req] of [
      ["AuthEnable", {}],
      ["UserList", {}],
      ["UserAdd", { name: "", password: "x" }],
      ["UserGet", { name: "" }],
      ["UserGet", { name: "u1" }],
      ["RoleGet", { role: "root" }],
      ["Authenticate", { name: "u1", password: "bad" }],
      ["Authenticate", { name: "nobody", password: "" }],
      ["Authenticate", { name: "cn", password: "" }],
      ["Authenticate", { name: "", password: "" }]
    ] as const)
      await same(m, req)
    const u1 = await Promise.all(targets.map((c) => tokenOf(c, "u1", "pw1")))
    const root = await Promise.all(targets.map((c) => tokenOf(c, "root", "rootpw")))
    const empty = await Promise.all(targets.map((c) => tokenOf(c, "empty", "")))
    await same("UserGet", { name: "u1" }, u1)
    await same("UserGet", { name: "root" }, u1)
    await same("UserList", {}, u1)
    await same("RoleAdd", { name: "x" }, u1)
    await same("UserGet", { name: "empty" }, empty)
    await same("RoleAdd", { name: "x" }, root)
    await same("UserGrantRole", { user: "u1", role: "x" }, root)
    await same("RoleGet", { role: "x" }, u1)
    await same("UserDelete", { name: "root" }, root)
    await same("RoleDelete", { role: "root" }, root)
    await same("UserRevokeRole", { name: "root", role: "root" }, root)
    await same("UserChangePassword", { name: "u1", password: "pw2" }, root)
    await same("UserGet", { name: "u1" }, u1)
    await same("UserList", {}, ["bogus", "bogus"])
    await same("AuthDisable", {}, u1)
    await same("AuthDisable", {}, root)
    await same("UserList", {})
  })
})
