/**
 * The client with credentials (etcdctl --user) on our server: it authenticates when it connects,
 * sends the token with every call, authenticates again when its token has expired, and sends no
 * token to a server with auth off.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type InProcessServer, sleep, startInProcess } from "../server/support/in-process.js"
import { b, callAs, clientsOf, closeClients } from "../server/auth/support.js"
import { withClient } from "./helpers.js"

describe("client credentials", () => {
  let srv: InProcessServer
  beforeAll(async () => {
    srv = await startInProcess({ bcryptCost: 4, authTokenTtl: 1 })
    const c = clientsOf(srv.endpoint)
    try {
      await callAs(c.auth, "UserAdd", { name: "root", password: "rootpw" })
      await callAs(c.auth, "UserGrantRole", { user: "root", role: "root" })
      await callAs(c.auth, "RoleAdd", { name: "app" })
      await callAs(c.auth, "RoleGrantPermission", {
        name: "app",
        perm: { permType: 2, key: b("/app/"), range_end: b("/app0") }
      })
      await callAs(c.auth, "UserAdd", { name: "alice", password: "alicepw" })
      await callAs(c.auth, "UserGrantRole", { user: "alice", role: "app" })
      const r = await callAs(c.auth, "AuthEnable", {})
      if (!r.ok) throw new Error(r.details)
    } finally {
      closeClients(c)
    }
  })
  afterAll(() => srv?.close())

  const message = <A>(e: Effect.Effect<A, { message: string }>) =>
    Effect.match(e, { onFailure: (err) => err.message, onSuccess: () => "ok" })

  it("allowed and denied as the user; no credentials is the empty user; a wrong password fails the connection", async () => {
    const alice = { username: "alice", password: "alicepw" }
    expect(await withClient(srv.endpoint, (c) => message(c.kv.put("/app/x", "1")), alice)).toBe("ok")
    expect(await withClient(srv.endpoint, (c) => message(c.kv.put("other", "1")), alice)).toBe(
      "etcdserver: permission denied"
    )
    expect(await withClient(srv.endpoint, (c) => message(c.kv.get("/app/x")))).toBe("etcdserver: user name is empty")
    await expect(
      withClient(srv.endpoint, (c) => c.kv.get("/app/x"), { username: "alice", password: "bad" })
    ).rejects.toThrow("etcdserver: authentication failed, invalid user ID or password")
  })

  it("authenticates again when its simple token has expired (--auth-token-ttl 1)", async () => {
    const got = await withClient(
      srv.endpoint,
      (c) =>
        Effect.gen(function* () {
          yield* c.kv.put("/app/y", "1")
          // the server's keeper drops the token within 1 s after its TTL
          yield* Effect.promise(() => sleep(2500))
          return yield* c.kv.get("/app/y")
        }),
      { username: "alice", password: "alicepw" }
    )
    expect(got.kvs.map((kv) => Buffer.from(kv.value).toString())).toEqual(["1"])
  })
})

describe("client credentials against a server with auth off", () => {
  it("send no token", async () => {
    const srv = await startInProcess({})
    try {
      const r = await withClient(srv.endpoint, (c) => Effect.zipRight(c.kv.put("k", "v"), c.kv.get("k")), {
        username: "nobody",
        password: "x"
      })
      expect(r.count).toBe(1n)
    } finally {
      await srv.close()
    }
  })
})
