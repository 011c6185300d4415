/**
 * The Auth service (etcd's v3rpc/auth.go over the AuthStore) with etcd 3.4's admin rule
 * (authApplierV3): with auth enabled, every user and role change, UserList and RoleList need a
 * user with the root role; UserGet of oneself and RoleGet of one's own role do not. Responses
 * carry the usual header at the current store revision. AuthStatus is etcd 3.5's.
 */
import { Effect } from "effect"
import type { AuthStoreShape } from "../auth/auth-store.js"
import type { AuthError } from "../auth/errors.js"
import type { Permission } from "../auth/range-perm.js"
import type { AuthInfo } from "../auth/token-provider.js"
import type { EtcdError } from "../errors.js"
import type { CallRunner } from "./grpc-bridge.js"
import { type AuthGuard, authInfoGrpc, type CallWithMetadata, check, needsAuth } from "./auth-guard.js"
import type { MakeHeader } from "./header.js"

type Req = Record<string, any>

const EMPTY = new Uint8Array(0)
const bytes = (b: unknown): Uint8Array => (b instanceof Uint8Array ? b : EMPTY)

/** A Permission message; an absent one is the zero Permission (etcd 3.4 crashes on it). */
const permOf = (p: Req | null | undefined): Permission => ({
  permType: typeof p?.["permType"] === "number" ? p["permType"] : 0,
  key: bytes(p?.["key"]),
  rangeEnd: bytes(p?.["range_end"])
})

const permToPb = (p: Permission) => ({ permType: p.permType, key: p.key, range_end: p.rangeEnd })

export const makeAuthService = (runner: CallRunner, guard: AuthGuard, header: MakeHeader, rev: () => number) => {
  const store: AuthStoreShape = guard.store
  const ok = <A extends object>(extra?: A) => ({ header: header(rev()), ...extra })

  const caller = (call: CallWithMetadata): Effect.Effect<AuthInfo | undefined, EtcdError> =>
    needsAuth(guard, call) ? authInfoGrpc(guard, call) : Effect.succeed(undefined)

  /** an admin operation: the caller must hold the root role when auth is on */
  const admin = <A>(method: string, f: (req: Req) => Effect.Effect<A, EtcdError>) =>
    runner.unary<Req, object>(method, (req, call) =>
      Effect.flatMap(caller(call), (ai) => Effect.zipRight(check(store.isAdminPermitted(ai)), f(req))).pipe(
        Effect.map((extra) => ok(extra as object))
      )
    )

  const orFail = <A>(r: A | AuthError): Effect.Effect<A, EtcdError> =>
    typeof r === "object" && r !== null && "raw" in r && "grpc" in r
      ? Effect.fail((r as AuthError).grpc())
      : Effect.succeed(r as A)

  return {
    AuthEnable: admin("AuthEnable", () => store.authEnable()),
    AuthDisable: admin("AuthDisable", () => store.authDisable()),
    AuthStatus: runner.unary<Req, object>("AuthStatus", () =>
      Effect.sync(() => ok({ enabled: store.enabled, authRevision: store.revision() }))
    ),
    Authenticate: runner.unary<Req, object>("Authenticate", (req) =>
      Effect.map(store.authenticate(String(req["name"] ?? ""), String(req["password"] ?? "")), (token) => ok({ token }))
    ),

    UserAdd: admin("UserAdd", (req) =>
      store.userAdd(String(req["name"] ?? ""), String(req["password"] ?? ""), req["options"]?.["no_password"] === true)
    ),
    UserDelete: admin("UserDelete", (req) => store.userDelete(String(req["name"] ?? ""))),
    UserChangePassword: admin("UserChangePassword", (req) =>
      store.userChangePassword(String(req["name"] ?? ""), String(req["password"] ?? ""))
    ),
    UserGrantRole: admin("UserGrantRole", (req) =>
      store.userGrantRole(String(req["user"] ?? ""), String(req["role"] ?? ""))
    ),
    UserRevokeRole: admin("UserRevokeRole", (req) =>
      store.userRevokeRole(String(req["name"] ?? ""), String(req["role"] ?? ""))
    ),
    UserList: admin("UserList", () => Effect.sync(() => ({ users: store.userList() }))),
    UserGet: runner.unary<Req, object>("UserGet", (req, call) =>
      Effect.gen(function* () {
        const ai = yield* caller(call)
        const name = String(req["name"] ?? "")
        const denied = store.isAdminPermitted(ai)
        if (denied !== undefined && name !== (ai?.username ?? "")) return yield* Effect.fail(denied.grpc())
        const roles = yield* orFail(store.userGet(name))
        return ok({ roles })
      })
    ),

    RoleAdd: admin("RoleAdd", (req) => store.roleAdd(String(req["name"] ?? ""))),
    RoleDelete: admin("RoleDelete", (req) => store.roleDelete(String(req["role"] ?? ""))),
    RoleGrantPermission: admin("RoleGrantPermission", (req) =>
      store.roleGrantPermission(String(req["name"] ?? ""), permOf(req["perm"]))
    ),
    RoleRevokePermission: admin("RoleRevokePermission", (req) =>
      store.roleRevokePermission(String(req["role"] ?? ""), bytes(req["key"]), bytes(req["range_end"]))
    ),
    RoleList: admin("RoleList", () => Effect.sync(() => ({ roles: store.roleList() }))),
    RoleGet: runner.unary<Req, object>("RoleGet", (req, call) =>
      Effect.gen(function* () {
        const ai = yield* caller(call)
        const role = String(req["role"] ?? "")
        const denied = store.isAdminPermitted(ai)
        if (denied !== undefined && !store.hasRole(ai?.username ?? "", role)) return yield* Effect.fail(denied.grpc())
        const perms = yield* orFail(store.roleGet(role))
        return ok({ perm: perms.map(permToPb) })
      })
    )
  }
}
