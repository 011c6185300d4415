/**
 * etcd's AuthStore (auth/store.go) as an Effect service: users, roles and their key permissions,
 * the enabled flag and the auth revision, persisted in the backend's "auth", "authUsers" and
 * "authRoles" buckets and replayed when the member starts.
 *
 * - Every change of users or roles moves the auth revision on (etcd's commitRevision), durably in
 *   the same batch; AuthEnable/AuthDisable do not. A credential carries the revision it was issued
 *   at: a JWT whose revision is below the store's is refused as "revision of auth store is old";
 *   simple tokens are looked up at the current revision, and a user's password change or deletion
 *   drops that user's tokens instead.
 * - State lives in memory and changes synchronously; the backend stages the batch at once (reads
 *   see it) and the returned Effect waits until it is durable.
 * - Passwords are bcrypt hashes (bcryptjs, asynchronous rounds so the event loop keeps serving).
 * - Permission checks (isOpPermitted, isAdminPermitted) are plain synchronous functions returning
 *   an AuthError or undefined. `enabled` is a plain field: with auth off a check is one boolean.
 */
import bcrypt from "bcryptjs"
import { Context, Effect, Either, Layer, Schedule } from "effect"
import { Backend, type BackendShape, type WriteOp } from "../backend/backend.js"
import type { EtcdError } from "../errors.js"
import { supervised } from "../supervision/fatal.js"
import { RecoveryError } from "../mvcc/recovery-error.js"
import { type AuthError, AuthErrors, noPasswordUser } from "./errors.js"
import { type Permission, PermType, rangeOpPermitted, type UnifiedPermissions, unify } from "./range-perm.js"
import {
  decodeRevision,
  decodeRole,
  decodeUser,
  encodeRevision,
  encodeRole,
  encodeUser,
  ENABLED_KEY,
  nameKey,
  REVISION_KEY,
  type RoleRecord,
  type UserRecord
} from "./records.js"
import type { AuthInfo, TokenProvider } from "./token-provider.js"

/** etcd's root user: `auth enable` requires it, and it holds every permission. */
export const ROOT_USER = "root"
/** etcd's root role: a user granted it has every permission and may manage auth. */
export const ROOT_ROLE = "root"

/** etcd's default --bcrypt-cost (bcrypt.DefaultCost). */
export const DEFAULT_BCRYPT_COST = 10

/** What the auth store is built with: its token provider (--auth-token) and bcrypt cost. */
export interface AuthStoreConfig {
  readonly tokenProvider: TokenProvider
  /** --bcrypt-cost (4..31) */
  readonly bcryptCost: number
}

const fail = (e: AuthError): Effect.Effect<never, EtcdError> => Effect.fail(e.grpc())

const compareKeys = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b)
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0

/** Every record of an auth bucket, or the first that does not decode as a RecoveryError. */
const readBucket = <R>(
  backend: BackendShape,
  bucket: "authUsers" | "authRoles",
  decode: (b: Uint8Array) => Either.Either<R, string>
): Either.Either<Array<R>, RecoveryError> => {
  const records: Array<R> = []
  for (const [k, v] of backend.range(bucket, new Uint8Array(0), undefined)) {
    const record = decode(v)
    if (Either.isLeft(record)) {
      const name = JSON.stringify(Buffer.from(k).toString("utf8"))
      const message = `${bucket} bucket: record ${name} is unreadable: ${record.left}`
      return Either.left(new RecoveryError({ reason: "AuthRecovery", message }))
    }
    records.push(record.right)
  }
  return Either.right(records)
}

/** etcd's auth.AuthStore: users, roles and their permissions over the backend's auth buckets. */
export interface AuthStoreShape {
  /** read on every request */
  readonly enabled: boolean
  readonly config: AuthStoreConfig
  /** a new store starts at auth revision 1 (0 means "no user" in a credential) */
  readonly init: Effect.Effect<void, EtcdError>
  /** the auth revision: every change moves it on, and older credentials are refused */
  revision(): number
  /** AuthEnable: refused without a root user that has the root role */
  authEnable(): Effect.Effect<void, EtcdError>
  /** AuthDisable: every request is permitted again */
  authDisable(): Effect.Effect<void, EtcdError>
  /** a token for the user's password, as etcd's Authenticate */
  authenticate(name: string, password: string): Effect.Effect<string, EtcdError>
  /** UserAdd: a new user with a bcrypt hash of the password, or none with `noPassword` */
  userAdd(name: string, password: string, noPassword: boolean): Effect.Effect<void, EtcdError>
  /** UserDelete: the user and its tokens go */
  userDelete(name: string): Effect.Effect<void, EtcdError>
  /** UserChangePassword: a new hash; the user's tokens are invalidated */
  userChangePassword(name: string, password: string): Effect.Effect<void, EtcdError>
  /** UserGrantRole: the role (which must exist) added to the user */
  userGrantRole(name: string, role: string): Effect.Effect<void, EtcdError>
  /** UserRevokeRole: the role taken from the user */
  userRevokeRole(name: string, role: string): Effect.Effect<void, EtcdError>
  /** the user's roles */
  userGet(name: string): ReadonlyArray<string> | AuthError
  /** names in key order */
  userList(): ReadonlyArray<string>
  /** RoleAdd: a new role without permissions */
  roleAdd(name: string): Effect.Effect<void, EtcdError>
  /** RoleDelete: the role, and its grant on every user that had it */
  roleDelete(name: string): Effect.Effect<void, EtcdError>
  /** the role's permissions */
  roleGet(name: string): ReadonlyArray<Permission> | AuthError
  /** names in key order */
  roleList(): ReadonlyArray<string>
  /** RoleGrantPermission: a key or range permission added to the role */
  roleGrantPermission(name: string, perm: Permission): Effect.Effect<void, EtcdError>
  /** RoleRevokePermission: the permission on exactly this key or range removed */
  roleRevokePermission(name: string, key: Uint8Array, rangeEnd: Uint8Array): Effect.Effect<void, EtcdError>
  /** whether the user has the role */
  hasRole(user: string, role: string): boolean
  /** the credential behind a token; undefined: an invalid token */
  authInfoFromToken(token: string): Effect.Effect<AuthInfo | undefined>
  /** etcd's AuthInfoFromTLS: the client certificate's common name is the user, at the current revision */
  authInfoFromCommonName(cn: string | undefined): AuthInfo | undefined
  /** etcd's isOpPermitted: READ or WRITE on `key` (`rangeEnd`: see rangeOpPermitted) */
  isOpPermitted(
    ai: AuthInfo | undefined,
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined,
    permType: typeof PermType.READ | typeof PermType.WRITE
  ): AuthError | undefined
  /** READ on the key or range: undefined when permitted, else etcd's error */
  isRangePermitted(ai: AuthInfo | undefined, key: Uint8Array, rangeEnd: Uint8Array | undefined): AuthError | undefined
  /** WRITE on the key: undefined when permitted, else etcd's error */
  isPutPermitted(ai: AuthInfo | undefined, key: Uint8Array): AuthError | undefined
  /** WRITE on the key or range: undefined when permitted, else etcd's error */
  isDeleteRangePermitted(
    ai: AuthInfo | undefined,
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined
  ): AuthError | undefined
  /** etcd 3.4's IsAdminPermitted: the user has the root role */
  isAdminPermitted(ai: AuthInfo | undefined): AuthError | undefined
}

class AuthStoreImpl implements AuthStoreShape {
  /** Read on every request: keep it a plain field. */
  enabled = false
  private rev = 0
  private readonly users = new Map<string, UserRecord>()
  private readonly roles = new Map<string, RoleRecord>()
  private readonly permCache = new Map<string, UnifiedPermissions>()

  /**
   * The store as the backend holds it. A user or role record that does not decode is start-up
   * corruption (etcd panics restoring it): a RecoveryError, and the member does not start.
   */
  static load(backend: BackendShape, config: AuthStoreConfig): Effect.Effect<AuthStoreImpl, RecoveryError> {
    return Effect.suspend(() =>
      Either.zipWith(
        readBucket(backend, "authUsers", decodeUser),
        readBucket(backend, "authRoles", decodeRole),
        (users, roles) => new AuthStoreImpl(backend, config, users, roles)
      )
    )
  }

  private constructor(
    private readonly backend: BackendShape,
    readonly config: AuthStoreConfig,
    users: ReadonlyArray<UserRecord>,
    roles: ReadonlyArray<RoleRecord>
  ) {
    for (const u of users) this.users.set(u.name, u)
    for (const r of roles) this.roles.set(r.name, r)
    const flag = backend.get("auth", ENABLED_KEY)
    this.enabled = flag !== undefined && flag.length === 1 && flag[0] === 1
    this.rev = decodeRevision(backend.get("auth", REVISION_KEY))
    if (this.enabled) config.tokenProvider.enable()
  }

  /** etcd starts a new store at auth revision 1 (0 means "no user" in a credential). */
  readonly init: Effect.Effect<void, EtcdError> = Effect.suspend(() => (this.rev === 0 ? this.commit([]) : Effect.void))

  revision(): number {
    return this.rev
  }

  // --- persistence -------------------------------------------------------------------------

  /** Moves the revision on and writes `ops` with it in one batch. */
  private commit(ops: Array<WriteOp>): Effect.Effect<void, EtcdError> {
    this.rev++
    this.permCache.clear()
    ops.push({ bucket: "auth", key: REVISION_KEY, value: encodeRevision(this.rev) })
    return this.write(ops)
  }

  private write(ops: ReadonlyArray<WriteOp>): Effect.Effect<void, EtcdError> {
    return Effect.orDie(this.backend.write(ops))
  }

  private putUser(u: UserRecord): WriteOp {
    this.users.set(u.name, u)
    return { bucket: "authUsers", key: nameKey(u.name), value: encodeUser(u) }
  }

  private putRole(r: RoleRecord): WriteOp {
    this.roles.set(r.name, r)
    return { bucket: "authRoles", key: nameKey(r.name), value: encodeRole(r) }
  }

  private hash(password: string): Effect.Effect<string> {
    return Effect.promise(() => bcrypt.hash(password, this.config.bcryptCost))
  }

  // --- enable / disable / authenticate -----------------------------------------------------

  authEnable(): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (this.enabled) return Effect.void
      const root = this.users.get(ROOT_USER)
      if (root === undefined) return fail(AuthErrors.rootUserNotExist)
      if (!root.roles.includes(ROOT_ROLE)) return fail(AuthErrors.rootRoleNotExist)
      this.enabled = true
      this.config.tokenProvider.enable()
      this.permCache.clear()
      return this.write([{ bucket: "auth", key: ENABLED_KEY, value: new Uint8Array([1]) }])
    })
  }

  authDisable(): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (!this.enabled) return Effect.void
      this.enabled = false
      this.config.tokenProvider.disable()
      return this.write([{ bucket: "auth", key: ENABLED_KEY, value: new Uint8Array([0]) }])
    })
  }

  /**
   * etcd's CheckPassword then Authenticate: the password is compared outside any lock, and the
   * whole is tried again if the auth store changed meanwhile.
   */
  authenticate(name: string, password: string): Effect.Effect<string, EtcdError> {
    const self = this
    return Effect.gen(function* () {
      for (;;) {
        if (!self.enabled) return yield* fail(AuthErrors.authNotEnabled)
        const user = self.users.get(name)
        if (user === undefined) return yield* fail(AuthErrors.authFailed)
        if (user.noPassword) return yield* Effect.fail(noPasswordUser())
        const checked = self.rev
        const ok = yield* Effect.promise(() => bcrypt.compare(password, user.password))
        if (!ok) return yield* fail(AuthErrors.authFailed)
        if (!self.enabled) return yield* fail(AuthErrors.authNotEnabled)
        if (!self.users.has(name)) return yield* fail(AuthErrors.authFailed)
        const token = yield* self.config.tokenProvider.assign(name, self.rev)
        if (checked === self.rev) return token
      }
    })
  }

  // --- users -------------------------------------------------------------------------------

  userAdd(name: string, password: string, noPassword: boolean): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (name.length === 0) return fail(AuthErrors.userEmpty)
      return Effect.flatMap(noPassword ? Effect.succeed("") : this.hash(password), (hashed) => {
        if (this.users.has(name)) return fail(AuthErrors.userAlreadyExist)
        return this.commit([this.putUser({ name, password: hashed, roles: [], noPassword })])
      })
    })
  }

  userDelete(name: string): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (this.enabled && name === ROOT_USER) return fail(AuthErrors.invalidAuthMgmt)
      if (!this.users.has(name)) return fail(AuthErrors.userNotFound)
      this.users.delete(name)
      this.config.tokenProvider.invalidateUser(name)
      return this.commit([{ bucket: "authUsers", key: nameKey(name), value: undefined }])
    })
  }

  userChangePassword(name: string, password: string): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (!this.users.has(name)) return fail(AuthErrors.userNotFound)
      return Effect.flatMap(this.hash(password), (hashed) => {
        const user = this.users.get(name)
        if (user === undefined) return fail(AuthErrors.userNotFound)
        this.config.tokenProvider.invalidateUser(name)
        return this.commit([this.putUser({ ...user, password: hashed })])
      })
    })
  }

  userGrantRole(name: string, role: string): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      const user = this.users.get(name)
      if (user === undefined) return fail(AuthErrors.userNotFound)
      if (role !== ROOT_ROLE && !this.roles.has(role)) return fail(AuthErrors.roleNotFound)
      if (user.roles.includes(role)) return Effect.void
      const roles = [...user.roles, role].sort()
      return this.commit([this.putUser({ ...user, roles })])
    })
  }

  userRevokeRole(name: string, role: string): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (this.enabled && name === ROOT_USER && role === ROOT_ROLE) return fail(AuthErrors.invalidAuthMgmt)
      const user = this.users.get(name)
      if (user === undefined) return fail(AuthErrors.userNotFound)
      if (!user.roles.includes(role)) return fail(AuthErrors.roleNotGranted)
      return this.commit([this.putUser({ ...user, roles: user.roles.filter((r) => r !== role) })])
    })
  }

  userGet(name: string): ReadonlyArray<string> | AuthError {
    const user = this.users.get(name)
    return user === undefined ? AuthErrors.userNotFound : user.roles
  }

  /** names in key order */
  userList(): ReadonlyArray<string> {
    return [...this.users.keys()].sort(byBytes)
  }

  // --- roles -------------------------------------------------------------------------------

  roleAdd(name: string): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (name.length === 0) return fail(AuthErrors.roleEmpty)
      if (this.roles.has(name)) return fail(AuthErrors.roleAlreadyExist)
      return this.commit([this.putRole({ name, perms: [] })])
    })
  }

  roleDelete(name: string): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      if (this.enabled && name === ROOT_ROLE) return fail(AuthErrors.invalidAuthMgmt)
      if (!this.roles.has(name)) return fail(AuthErrors.roleNotFound)
      this.roles.delete(name)
      const ops: Array<WriteOp> = [{ bucket: "authRoles", key: nameKey(name), value: undefined }]
      for (const user of [...this.users.values()]) {
        if (user.roles.includes(name)) ops.push(this.putUser({ ...user, roles: user.roles.filter((r) => r !== name) }))
      }
      return this.commit(ops)
    })
  }

  roleGet(name: string): ReadonlyArray<Permission> | AuthError {
    const role = this.roles.get(name)
    return role === undefined ? AuthErrors.roleNotFound : role.perms
  }

  roleList(): ReadonlyArray<string> {
    return [...this.roles.keys()].sort(byBytes)
  }

  /**
   * etcd's RoleGrantPermission: the first permission whose key is >= the new key is updated in
   * place when it has the same key and range end; otherwise the permission is added, sorted by key.
   */
  roleGrantPermission(name: string, perm: Permission): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      const role = this.roles.get(name)
      if (role === undefined) return fail(AuthErrors.roleNotFound)
      const perms = [...role.perms]
      const idx = perms.findIndex((p) => compareKeys(p.key, perm.key) >= 0)
      const at = idx < 0 ? undefined : perms[idx]!
      if (at !== undefined && sameBytes(at.key, perm.key) && sameBytes(at.rangeEnd, perm.rangeEnd)) {
        perms[idx] = { ...at, permType: perm.permType }
      } else {
        perms.push(perm)
        perms.sort((a, b) => compareKeys(a.key, b.key))
      }
      return this.commit([this.putRole({ name, perms })])
    })
  }

  roleRevokePermission(name: string, key: Uint8Array, rangeEnd: Uint8Array): Effect.Effect<void, EtcdError> {
    return Effect.suspend(() => {
      const role = this.roles.get(name)
      if (role === undefined) return fail(AuthErrors.roleNotFound)
      const perms = role.perms.filter((p) => !(sameBytes(p.key, key) && sameBytes(p.rangeEnd, rangeEnd)))
      if (perms.length === role.perms.length) return fail(AuthErrors.permissionNotGranted)
      return this.commit([this.putRole({ name, perms })])
    })
  }

  // --- checks ------------------------------------------------------------------------------

  hasRole(user: string, role: string): boolean {
    return this.users.get(user)?.roles.includes(role) ?? false
  }

  /** The credential behind a token; undefined: an invalid token. */
  authInfoFromToken(token: string): Effect.Effect<AuthInfo | undefined> {
    return this.config.tokenProvider.info(token, this.rev)
  }

  /** etcd's AuthInfoFromTLS: the client certificate's common name is the user, at the current revision. */
  authInfoFromCommonName(cn: string | undefined): AuthInfo | undefined {
    return cn === undefined || cn === "" ? undefined : { username: cn, revision: this.rev }
  }

  private unified(user: UserRecord): UnifiedPermissions {
    let u = this.permCache.get(user.name)
    if (u === undefined) {
      const perms: Array<Permission> = []
      for (const r of user.roles) {
        const role = this.roles.get(r)
        if (role !== undefined) perms.push(...role.perms)
      }
      u = unify(perms)
      this.permCache.set(user.name, u)
    }
    return u
  }

  /** etcd's isOpPermitted: READ or WRITE on `key` (`rangeEnd`: see rangeOpPermitted). */
  isOpPermitted(
    ai: AuthInfo | undefined,
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined,
    permType: typeof PermType.READ | typeof PermType.WRITE
  ): AuthError | undefined {
    if (!this.enabled) return undefined
    if (ai === undefined || ai.revision === 0) return AuthErrors.userEmpty
    if (ai.revision < this.rev) return AuthErrors.authOldRevision
    const user = this.users.get(ai.username)
    if (user === undefined) return AuthErrors.permissionDenied
    if (user.roles.includes(ROOT_ROLE)) return undefined
    const perms = this.unified(user)
    return rangeOpPermitted(permType === PermType.READ ? perms.read : perms.write, key, rangeEnd)
      ? undefined
      : AuthErrors.permissionDenied
  }

  isRangePermitted(ai: AuthInfo | undefined, key: Uint8Array, rangeEnd: Uint8Array | undefined) {
    return this.isOpPermitted(ai, key, rangeEnd, PermType.READ)
  }

  isPutPermitted(ai: AuthInfo | undefined, key: Uint8Array) {
    return this.isOpPermitted(ai, key, undefined, PermType.WRITE)
  }

  isDeleteRangePermitted(ai: AuthInfo | undefined, key: Uint8Array, rangeEnd: Uint8Array | undefined) {
    return this.isOpPermitted(ai, key, rangeEnd, PermType.WRITE)
  }

  /** etcd 3.4's IsAdminPermitted: the user has the root role. */
  isAdminPermitted(ai: AuthInfo | undefined): AuthError | undefined {
    if (!this.enabled) return undefined
    if (ai === undefined || ai.username === "") return AuthErrors.userEmpty
    const user = this.users.get(ai.username)
    if (user === undefined) return AuthErrors.userNotFound
    return user.roles.includes(ROOT_ROLE) ? undefined : AuthErrors.permissionDenied
  }
}

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** The auth store service (etcd's auth.AuthStore): users, roles, their permissions and tokens. */
export class AuthStore extends Context.Tag("etcd-effect/AuthStore")<AuthStore, AuthStoreShape>() {}

/** etcd's simpleTokenTTLResolution: expired simple tokens are dropped each second. */
const SWEEP_EVERY = "1 second"

/** The auth store over the Backend in context, replayed from it; sweeps tokens while open. */
export const layer = (config: AuthStoreConfig): Layer.Layer<AuthStore, RecoveryError, Backend> =>
  Layer.scoped(
    AuthStore,
    Effect.gen(function* () {
      const backend = yield* Backend
      const store = yield* AuthStoreImpl.load(backend, config)
      yield* Effect.orDie(store.init)
      // a sweep that throws would leave expired tokens valid: supervised (serve fails the member)
      yield* Effect.forkScoped(
        supervised(
          "auth token sweep",
          Effect.repeat(
            Effect.sync(() => config.tokenProvider.sweep()),
            Schedule.spaced(SWEEP_EVERY)
          )
        )
      )
      return store
    })
  )
