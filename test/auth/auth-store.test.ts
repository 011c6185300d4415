/**
 * The auth store on the memory backend: etcd's rules for the auth revision (every user or role
 * change moves it on, enable/disable and no-op grants do not), the root rules, the grant-update
 * rule, role deletion taking the role from its users, and replay from the backend.
 */
import { Cause, Effect, Exit, Layer, Option, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { AuthStore, layer as authLayer, type AuthStoreShape } from "../../src/auth/auth-store.js"
import { simpleTokenProvider } from "../../src/auth/token-provider.js"
import { Backend } from "../../src/backend/backend.js"
import { makeMemoryBackend } from "../../src/backend/memory.js"
import { EtcdError } from "../../src/errors.js"
import { RecoveryError } from "../../src/mvcc/recovery-error.js"

const enc = (s: string) => new Uint8Array(Buffer.from(s))

const open = async (backend = makeMemoryBackend().backend) => {
  const scope = Effect.runSync(Scope.make())
  const ctx = await Effect.runPromise(
    Layer.buildWithScope(authLayer({ tokenProvider: simpleTokenProvider(300_000), bcryptCost: 4 }), scope).pipe(
      Effect.provideService(Backend, backend)
    )
  )
  const store = ctx.unsafeMap.get(AuthStore.key) as AuthStoreShape
  return { store, backend, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const run = <A>(e: Effect.Effect<A, EtcdError>) => Effect.runPromise(Effect.either(e))
const failure = async <A>(e: Effect.Effect<A, EtcdError>) => {
  const r = await run(e)
  return r._tag === "Left" ? r.left.message : "ok"
}

describe("auth store", () => {
  it("moves the auth revision on for every change of users or roles, not for enable/disable or no-ops", async () => {
    const { store, close } = await open()
    try {
      expect(store.revision()).toBe(1)
      await run(store.userAdd("root", "pw", false))
      expect(store.revision()).toBe(2)
      await run(store.userGrantRole("root", "root"))
      expect(store.revision()).toBe(3)
      await run(store.userGrantRole("root", "root"))
      expect(store.revision()).toBe(3)
      await run(store.authEnable())
      await run(store.authDisable())
      await run(store.authEnable())
      expect(store.revision()).toBe(3)
      await run(store.roleAdd("r"))
      await run(store.roleGrantPermission("r", { permType: 0, key: enc("a"), rangeEnd: enc("c") }))
      await run(store.roleRevokePermission("r", enc("a"), enc("c")))
      expect(store.revision()).toBe(6)
      expect(await failure(store.roleRevokePermission("r", enc("a"), enc("c")))).toBe(
        "etcdserver: permission is not granted to the role"
      )
      expect(store.revision()).toBe(6)
    } finally {
      await close()
    }
  })

  it("keeps etcd's root rules and grant/revoke semantics", async () => {
    const { store, close } = await open()
    try {
      expect(await failure(store.authEnable())).toBe("etcdserver: root user does not exist")
      await run(store.userAdd("root", "pw", false))
      expect(await failure(store.authEnable())).toBe("etcdserver: root user does not have root role")
      await run(store.userGrantRole("root", "root"))
      expect(await failure(store.authEnable())).toBe("ok")
      expect(await failure(store.userDelete("root"))).toBe("etcdserver: invalid auth management")
      expect(await failure(store.userRevokeRole("root", "root"))).toBe("etcdserver: invalid auth management")
      expect(await failure(store.roleDelete("root"))).toBe("etcdserver: invalid auth management")
      expect(await failure(store.userAdd("", "x", false))).toBe("etcdserver: user name is empty")
      expect(await failure(store.roleAdd(""))).toBe("etcdserver: role name is empty")
      // same key and end: the type is replaced; a different end is another permission
      await run(store.roleAdd("r"))
      await run(store.roleGrantPermission("r", { permType: 0, key: enc("b"), rangeEnd: enc("c") }))
      await run(store.roleGrantPermission("r", { permType: 0, key: enc("a"), rangeEnd: enc("") }))
      await run(store.roleGrantPermission("r", { permType: 1, key: enc("b"), rangeEnd: enc("c") }))
      await run(store.roleGrantPermission("r", { permType: 2, key: enc("b"), rangeEnd: enc("d") }))
      const perms = store.roleGet("r")
      expect(
        Array.isArray(perms) &&
          perms.map((p) => [p.permType, Buffer.from(p.key).toString(), Buffer.from(p.rangeEnd).toString()])
      ).toEqual([
        [0, "a", ""],
        [1, "b", "c"],
        [2, "b", "d"]
      ])
      // deleting a role takes it from its users
      await run(store.userAdd("u", "pw", false))
      await run(store.userGrantRole("u", "r"))
      expect(store.userGet("u")).toEqual(["r"])
      await run(store.roleDelete("r"))
      expect(store.userGet("u")).toEqual([])
      // a password change or deletion drops the user's simple tokens
      const token = await Effect.runPromise(store.authenticate("u", "pw"))
      expect(await Effect.runPromise(store.authInfoFromToken(token))).toMatchObject({ username: "u" })
      await run(store.userChangePassword("u", "pw2"))
      expect(await Effect.runPromise(store.authInfoFromToken(token))).toBeUndefined()
      expect(await failure(store.authenticate("u", "pw"))).toBe(
        "etcdserver: authentication failed, invalid user ID or password"
      )
      expect(await failure(store.authenticate("u", "pw2"))).toBe("ok")
    } finally {
      await close()
    }
  })

  it("replays users, roles, the enabled flag and the revision from the backend", async () => {
    const first = await open()
    await run(first.store.userAdd("root", "pw", false))
    await run(first.store.userGrantRole("root", "root"))
    await run(first.store.userAdd("cn-only", "", true))
    await run(first.store.roleAdd("r"))
    await run(first.store.roleGrantPermission("r", { permType: 2, key: enc("k"), rangeEnd: enc("\0") }))
    await run(first.store.authEnable())
    const rev = first.store.revision()
    await first.close()
    const second = await open(first.backend)
    try {
      expect(second.store.enabled).toBe(true)
      expect(second.store.revision()).toBe(rev)
      expect(second.store.userList()).toEqual(["cn-only", "root"])
      expect(second.store.roleList()).toEqual(["r"])
      expect(await failure(second.store.authenticate("root", "pw"))).toBe("ok")
      // a user without password authenticates only by certificate CN
      expect(await failure(second.store.authenticate("cn-only", ""))).toBe(
        "auth: authentication failed, password was given for no password user"
      )
      expect(second.store.authInfoFromCommonName("cn-only")).toEqual({ username: "cn-only", revision: rev })
      expect(second.store.authInfoFromCommonName("")).toBeUndefined()
    } finally {
      await second.close()
    }
  })
})

describe("auth store start-up", () => {
  const loading = async (bucket: "authUsers" | "authRoles", name: string, value: string) => {
    const { backend } = makeMemoryBackend()
    await Effect.runPromise(backend.write([{ bucket, key: enc(name), value: enc(value) }]))
    const scope = Effect.runSync(Scope.make())
    const exit = await Effect.runPromiseExit(
      Layer.buildWithScope(authLayer({ tokenProvider: simpleTokenProvider(300_000), bcryptCost: 4 }), scope).pipe(
        Effect.provideService(Backend, backend)
      )
    )
    await Effect.runPromise(Scope.close(scope, Exit.void))
    return exit
  }
  const failureOf = (exit: Exit.Exit<unknown, unknown>) =>
    Exit.isFailure(exit) ? Cause.failureOption(exit.cause).pipe(Option.getOrUndefined) : undefined

  it("an unreadable user or role record is a RecoveryError naming it (etcd panics), not a defect", async () => {
    const user = failureOf(await loading("authUsers", "alice", "{not json"))
    expect(user).toBeInstanceOf(RecoveryError)
    expect(user).toMatchObject({ reason: "AuthRecovery" })
    expect((user as RecoveryError).message).toMatch(/^authUsers bucket: record "alice" is unreadable: /)
    const role = failureOf(await loading("authRoles", "r", JSON.stringify({ name: "r", perms: [{ type: 0, key: 1 }] })))
    expect(role).toMatchObject({ reason: "AuthRecovery" })
    expect((role as RecoveryError).message).toBe(
      'authRoles bucket: record "r" is unreadable: perms.0.key: Expected string, actual 1'
    )
  })

  it("a user record written before noPassword existed loads (noPassword false)", async () => {
    const exit = await loading("authUsers", "bob", JSON.stringify({ name: "bob", password: "x", roles: ["r"] }))
    expect(Exit.isSuccess(exit)).toBe(true)
    if (Exit.isSuccess(exit)) {
      const store = exit.value.unsafeMap.get(AuthStore.key) as AuthStoreShape
      expect(store.userGet("bob")).toEqual(["r"])
    }
  })
})
