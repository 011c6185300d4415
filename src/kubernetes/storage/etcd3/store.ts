/**
 * etcd3/store.go: storage.Interface over etcd through `EtcdClient`. Objects are JSON (through the
 * value transformer) under `pathPrefix + key`; an object's resourceVersion is its etcd mod
 * revision. Updates are optimistic (a txn guarded by the mod revision the update was computed
 * from, retried with the fresh object); lists page through etcd at one revision.
 */
import { Effect, Either, Layer } from "effect"
import { EtcdClient, type EtcdClientShape } from "../../../client/client.js"
import { prefixEnd } from "../../../client/key-range.js"
import { toBytes } from "../../../client/key-value.js"
import { Compare, Op } from "../../../client/op.js"
import type { EtcdError } from "../../../errors.js"
import { decodeObject, encodeObject } from "../../api/codec.js"
import type { KubeList, KubeObject } from "../../api/object-meta.js"
import {
  type GroupResource,
  newAlreadyExists,
  newBadRequest,
  newInternalError,
  newNotFound,
  newResourceExpired,
  newTooLargeResourceVersion,
  type StatusError
} from "../../api/status.js"
import { decodeContinue, encodeContinue } from "../continue.js"
import {
  type GetOptions,
  type ListOptions,
  type Preconditions,
  type ResponseMeta,
  Storage,
  type StorageShape,
  type UpdateFunc,
  type ValidateDeletion
} from "../interfaces.js"
import { checkPreconditions as checkPreconditionsOf } from "../preconditions.js"
import { Everything, isEmpty, matches } from "../selection-predicate.js"
import { encryptCheck } from "../value/identity.js"
import type { ValueTransformer } from "../value/transformer.js"
import { parseResourceVersion, parseWatchResourceVersion } from "../versioner.js"
import { readCompactRevision } from "./compact.js"
import { requestWatchProgressCheck } from "./feature-support.js"
import type { Etcd3StoreConfig } from "./config.js"
import {
  compactedList,
  CONTINUE_TOO_OLD,
  fromEtcd,
  isCompacted,
  isFutureRevision,
  LIST_TOO_OLD,
  nameOf
} from "./errors.js"
import { makeLeaseManager } from "./lease-manager.js"
import { watchChan } from "./watcher.js"

/** maxLimit: how far a filtered list's internal page size may double */
export const MAX_LIMIT = 10000

export type { Etcd3StoreConfig } from "./config.js"

/** storage.PrepareKey + store.prepareKey: validate a key and turn it into the etcd key. */
export const prepareKey = (
  pathPrefix: string,
  resourcePrefix: string,
  key: string,
  recursive: boolean
): Either.Either<string, StatusError> => {
  const q = JSON.stringify(key)
  if (key === ".." || key.startsWith("../") || key.endsWith("/..") || key.includes("/../")) {
    return Either.left(newInternalError(`invalid key: ${q}`))
  }
  if (key === "." || key.startsWith("./") || key.endsWith("/.") || key.includes("/./")) {
    return Either.left(newInternalError(`invalid key: ${q}`))
  }
  if (key === "" || key === "/") return Either.left(newInternalError(`empty key: ${q}`))
  let k = key
  if (recursive && !k.endsWith("/")) k += "/"
  if (!k.startsWith(resourcePrefix)) {
    return Either.left(
      newInternalError(`invalid key: ${JSON.stringify(k)} lacks resource prefix: ${JSON.stringify(resourcePrefix)}`)
    )
  }
  return Either.right(pathPrefix + (k.startsWith("/") ? k.slice(1) : k))
}

/** path.Join("/", prefix) with a trailing "/" */
export const normalizePathPrefix = (prefix: string | undefined): string => {
  const parts = (prefix ?? "/registry").split("/").filter((p) => p !== "" && p !== ".")
  return parts.length === 0 ? "/" : `/${parts.join("/")}/`
}

interface ObjState {
  readonly obj: KubeObject
  readonly meta: ResponseMeta
  readonly rev: bigint
  readonly data: Uint8Array
  readonly stale: boolean
}

const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export const make = (config: Etcd3StoreConfig): Effect.Effect<StorageShape, never, EtcdClient> =>
  Effect.map(EtcdClient, (client) => makeWith(client, config))

/** The store over a given client (no Context needed). */
export const makeWith = (client: EtcdClientShape, config: Etcd3StoreConfig): StorageShape => {
  const pathPrefix = normalizePathPrefix(config.pathPrefix)
  const resourcePrefix = config.resourcePrefix
  const gr: GroupResource = config.groupResource
  // the apiserver's default: plain values, but encrypted data is refused rather than served as an object
  const transformer: ValueTransformer = config.transformer ?? encryptCheck
  const leases = makeLeaseManager(client)
  let lastCompactRevision = 0n

  const prepare = (key: string, recursive: boolean) =>
    Effect.suspend(() => prepareKey(pathPrefix, resourcePrefix, key, recursive))

  const etcd = <A>(effect: Effect.Effect<A, EtcdError>) => Effect.mapError(effect, fromEtcd)

  /** decode(): bytes from etcd (already untransformed) → object with RV = rev */
  const decode = (data: Uint8Array, rev: bigint): Either.Either<KubeObject, StatusError> =>
    Either.mapLeft(decodeObject(data, rev), newInternalError)

  const fromStorage = (
    value: Uint8Array,
    key: string
  ): Either.Either<{ data: Uint8Array; stale: boolean }, StatusError> => {
    const r = transformer.fromStorage(value, key)
    return r.ok ? Either.right({ data: r.data, stale: r.stale }) : Either.left(newInternalError(r.error))
  }

  /** validateMinimumResourceVersion: the read must be at least the asked-for RV */
  const validateMinimumResourceVersion = (
    minimum: string | undefined,
    actual: bigint
  ): Effect.Effect<void, StatusError> => {
    if (minimum === undefined || minimum === "") return Effect.void
    const parsed = parseResourceVersion(minimum)
    if (Either.isLeft(parsed)) return Effect.fail(newBadRequest(`invalid resource version: ${parsed.left}`))
    if (parsed.right > actual) return Effect.fail(newTooLargeResourceVersion(parsed.right, actual, 0))
    return Effect.void
  }

  const getState = (
    kvs: ReadonlyArray<{ readonly value: Uint8Array; readonly modRevision: bigint; readonly lease: bigint }>,
    key: string,
    ignoreNotFound: boolean
  ): Effect.Effect<ObjState, StatusError> =>
    Effect.suspend(() => {
      const kv = kvs[0]
      if (kv === undefined) {
        if (!ignoreNotFound) return Effect.fail(newNotFound(gr, nameOf(key)))
        return Effect.succeed<ObjState>({
          obj: { metadata: {} },
          meta: { ttl: 0, resourceVersion: 0n },
          rev: 0n,
          data: new Uint8Array(0),
          stale: false
        })
      }
      const plain = fromStorage(kv.value, key)
      if (Either.isLeft(plain)) return Effect.fail(plain.left)
      const obj = decode(plain.right.data, kv.modRevision)
      if (Either.isLeft(obj)) return Effect.fail(obj.left)
      return Effect.succeed<ObjState>({
        obj: obj.right,
        meta: { ttl: 0, resourceVersion: kv.modRevision },
        rev: kv.modRevision,
        data: plain.right.data,
        stale: plain.right.stale
      })
    })

  const getCurrentState = (key: string, ignoreNotFound: boolean) =>
    Effect.flatMap(etcd(client.kv.get(key)), (r) => getState(r.kvs, key, ignoreNotFound))

  /** getStateFromObject: the cached object as if read (its RV is its revision) */
  const getStateFromObject = (obj: KubeObject): Effect.Effect<ObjState, StatusError> =>
    Effect.suspend(() => {
      const rv = parseResourceVersion(obj.metadata.resourceVersion)
      if (Either.isLeft(rv)) return Effect.fail(newInternalError(`couldn't get resource version: ${rv.left}`))
      return Effect.succeed({
        obj,
        meta: { ttl: 0, resourceVersion: rv.right },
        rev: rv.right,
        data: encodeObject(obj),
        stale: false
      })
    })

  const checkPreconditions = (key: string, p: Preconditions | undefined, obj: KubeObject) =>
    checkPreconditionsOf(gr, key, p, obj)

  const leaseFor = (ttl: number | undefined) =>
    ttl === undefined || ttl <= 0 ? Effect.succeed(undefined) : leases.getLease(ttl)

  const create: StorageShape["create"] = (key, obj, ttl) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      const rv = parseResourceVersion(obj.metadata.resourceVersion)
      if (Either.isRight(rv) && rv.right !== 0n) {
        return yield* Effect.fail(newInternalError("resourceVersion should not be set on objects to be created"))
      }
      const toStore = config.newObject === undefined ? obj : config.newObject(obj)
      const data = encodeObject(toStore)
      const lease = yield* leaseFor(ttl)
      const stored = transformer.toStorage(data, prepared)
      const txn = yield* etcd(
        client.kv
          .txn()
          .when(Compare.modRevision(prepared).equals(0n))
          .success(Op.put(prepared, stored, lease === undefined ? {} : { lease })).commit
      )
      if (!txn.succeeded) return yield* Effect.fail(newAlreadyExists(gr, nameOf(prepared)))
      return yield* decode(data, txn.header.revision)
    })

  /** Shared retry loop of Delete and GuaranteedUpdate: refetch when working from a stale cached object. */
  const conditionalDelete = (
    key: string,
    preconditions: Preconditions | undefined,
    validateDeletion: ValidateDeletion | undefined,
    cached: KubeObject | undefined
  ): Effect.Effect<KubeObject, StatusError> =>
    Effect.gen(function* () {
      let orig = cached !== undefined ? yield* getStateFromObject(cached) : yield* getCurrentState(key, false)
      let origIsCurrent = cached === undefined
      for (;;) {
        const preErr = checkPreconditions(key, preconditions, orig.obj)
        const validateErr =
          preErr !== undefined || validateDeletion === undefined
            ? preErr
            : yield* Effect.flip(validateDeletion(orig.obj)).pipe(Effect.orElseSucceed(() => undefined))
        if (validateErr !== undefined) {
          if (origIsCurrent) return yield* Effect.fail(validateErr)
          const cachedRev = orig.rev
          orig = yield* getCurrentState(key, false)
          origIsCurrent = true
          if (cachedRev === orig.rev) return yield* Effect.fail(validateErr)
          continue
        }
        const txn = yield* etcd(
          client.kv.txn().when(Compare.modRevision(key).equals(orig.rev)).success(Op.delete(key)).failure(Op.get(key))
            .commit
        )
        if (!txn.succeeded) {
          orig = yield* getState(txn.responses[0].kvs, key, false)
          origIsCurrent = true
          continue
        }
        return yield* decode(orig.data, txn.header.revision)
      }
    })

  const del: StorageShape["delete"] = (key, options = {}) =>
    Effect.flatMap(prepare(key, false), (prepared) =>
      conditionalDelete(prepared, options.preconditions, options.validateDeletion, options.cachedExistingObject)
    )

  const guaranteedUpdate: StorageShape["guaranteedUpdate"] = (key, options) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      const ignoreNotFound = options.ignoreNotFound === true
      const tryUpdate: UpdateFunc = options.tryUpdate
      let orig =
        options.cachedExistingObject !== undefined
          ? yield* getStateFromObject(options.cachedExistingObject)
          : yield* getCurrentState(prepared, ignoreNotFound)
      let origIsCurrent = options.cachedExistingObject === undefined
      for (;;) {
        const preErr = checkPreconditions(prepared, options.preconditions, orig.obj)
        if (preErr !== undefined) {
          if (origIsCurrent) return yield* Effect.fail(preErr)
          orig = yield* getCurrentState(prepared, ignoreNotFound)
          origIsCurrent = true
          continue
        }
        const updated = yield* Effect.either(tryUpdate(orig.obj, orig.meta))
        if (Either.isLeft(updated)) {
          if (origIsCurrent) return yield* Effect.fail(updated.left)
          const cachedRev = orig.rev
          orig = yield* getCurrentState(prepared, ignoreNotFound)
          origIsCurrent = true
          if (cachedRev === orig.rev) return yield* Effect.fail(updated.left)
          continue
        }
        const data = encodeObject(updated.right.object)
        if (!orig.stale && bytesEqual(data, orig.data)) {
          // nothing changed: no write, unless our copy was cached and etcd's differs
          if (!origIsCurrent) {
            orig = yield* getCurrentState(prepared, ignoreNotFound)
            origIsCurrent = true
            if (!bytesEqual(data, orig.data)) continue
          }
          if (!orig.stale) return yield* decode(orig.data, orig.rev)
        }
        const stored = transformer.toStorage(data, prepared)
        const lease = yield* leaseFor(updated.right.ttl)
        const txn = yield* etcd(
          client.kv
            .txn()
            .when(Compare.modRevision(prepared).equals(orig.rev))
            .success(Op.put(prepared, stored, lease === undefined ? {} : { lease }))
            .failure(Op.get(prepared)).commit
        )
        if (!txn.succeeded) {
          orig = yield* getState(txn.responses[0].kvs, prepared, ignoreNotFound)
          origIsCurrent = true
          continue
        }
        return yield* decode(data, txn.header.revision)
      }
    })

  const get: StorageShape["get"] = (key, options: GetOptions = {}) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(key, false)
      const r = yield* etcd(client.kv.get(prepared))
      yield* validateMinimumResourceVersion(options.resourceVersion, r.header.revision)
      const kv = r.kvs[0]
      if (kv === undefined) {
        if (options.ignoreNotFound === true) return undefined
        return yield* Effect.fail(newNotFound(gr, nameOf(prepared)))
      }
      const plain = fromStorage(kv.value, prepared)
      if (Either.isLeft(plain)) return yield* Effect.fail(plain.left)
      return yield* decode(plain.right.data, kv.modRevision)
    })

  const currentRevision = Effect.map(
    etcd(
      client.kv.get(pathPrefix + (resourcePrefix.startsWith("/") ? resourcePrefix.slice(1) : resourcePrefix), {
        prefix: true,
        countOnly: true
      })
    ),
    (r) => r.header.revision
  )

  /** interpretListError, and a future revision as "too large" */
  const listError = (e: EtcdError, paging: boolean, continueKey: string, keyPrefix: string, withRev: bigint) => {
    if (isCompacted(e)) {
      if (!paging) return Effect.fail(compactedList())
      const token = encodeContinue(continueKey, keyPrefix, -1n)
      return Effect.fail(
        Either.isLeft(token) ? newResourceExpired(LIST_TOO_OLD) : newResourceExpired(CONTINUE_TOO_OLD, token.right)
      )
    }
    if (isFutureRevision(e)) {
      return Effect.flatMap(
        Effect.orElseSucceed(currentRevision, () => 0n),
        (cur) => Effect.fail(newTooLargeResourceVersion(withRev, cur, 0))
      )
    }
    return Effect.fail(fromEtcd(e))
  }

  const getList: StorageShape["getList"] = (key, options: ListOptions) =>
    Effect.gen(function* () {
      const recursive = options.recursive === true
      let preparedKey = yield* prepare(key, recursive)
      const keyPrefix = preparedKey
      const pred = options.predicate ?? Everything
      const paging = pred.limit > 0
      let limit = pred.limit
      const rangeEnd = recursive ? prefixEndText(keyPrefix) : undefined

      let fromRV: bigint | undefined
      if (options.resourceVersion !== undefined && options.resourceVersion !== "") {
        const parsed = parseResourceVersion(options.resourceVersion)
        if (Either.isLeft(parsed)) return yield* Effect.fail(newBadRequest(`invalid resource version: ${parsed.left}`))
        fromRV = parsed.right
      }

      let withRev = 0n
      let continueKey = ""
      if (recursive && pred.continue !== "") {
        const decoded = decodeContinue(pred.continue, keyPrefix)
        if (Either.isLeft(decoded)) return yield* Effect.fail(newBadRequest(`invalid continue token: ${decoded.left}`))
        if (
          options.resourceVersion !== undefined &&
          options.resourceVersion !== "" &&
          options.resourceVersion !== "0"
        ) {
          return yield* Effect.fail(newBadRequest("specifying resource version is not allowed when using continue"))
        }
        continueKey = decoded.right.fromKey
        preparedKey = continueKey
        if (decoded.right.rv > 0n) withRev = decoded.right.rv
      } else if (fromRV !== undefined) {
        switch (options.resourceVersionMatch ?? "") {
          case "NotOlderThan":
            break
          case "Exact":
            withRev = fromRV
            break
          case "":
            if (recursive && pred.limit > 0 && fromRV > 0n) withRev = fromRV
            break
          default:
            return yield* Effect.fail(
              newInternalError(`unknown ResourceVersionMatch value: ${options.resourceVersionMatch}`)
            )
        }
      }

      const items: Array<KubeObject> = []
      let lastKey: string | undefined
      let hasMore = false
      let count = 0n
      for (;;) {
        const r = yield* client.kv
          .get(preparedKey, {
            ...(rangeEnd === undefined ? {} : { rangeEnd }),
            ...(paging ? { limit } : {}),
            ...(withRev !== 0n ? { revision: withRev } : {})
          })
          .pipe(Effect.catchAll((e) => listError(e, pred.continue !== "", continueKey, keyPrefix, withRev)))
        // NotOlderThan (and the legacy RV without limit): the read must not be older than asked
        if (options.resourceVersionMatch !== "Exact") {
          yield* validateMinimumResourceVersion(options.resourceVersion, r.header.revision)
        }
        hasMore = r.more
        count = r.count
        if (r.kvs.length === 0 && r.more) {
          return yield* Effect.fail(
            newInternalError("no results were found, but etcd indicated there were more values remaining")
          )
        }
        if (withRev === 0n) withRev = r.header.revision
        for (const kv of r.kvs) {
          if (paging && items.length >= pred.limit) {
            hasMore = true
            break
          }
          const k = textOf(kv.key)
          lastKey = k
          const plain = transformer.fromStorage(kv.value, k)
          if (!plain.ok)
            return yield* Effect.fail(newInternalError(`unable to transform key ${JSON.stringify(k)}: ${plain.error}`))
          const obj = decode(plain.data, kv.modRevision)
          if (Either.isLeft(obj)) return yield* Effect.fail(obj.left)
          if (matches(pred, obj.right)) items.push(obj.right)
        }
        if (!hasMore || !paging) break
        if (items.length >= pred.limit) break
        // an under-filled page (the selector dropped objects): double the page, up to maxLimit
        if (limit < MAX_LIMIT) limit = Math.min(limit * 2, MAX_LIMIT)
        preparedKey = lastKey + "\x00"
      }

      const list: KubeList = { metadata: { resourceVersion: withRev.toString() }, items }
      if (hasMore && lastKey !== undefined) {
        const next = encodeContinue(lastKey + "\x00", keyPrefix, withRev)
        if (Either.isLeft(next)) return yield* Effect.fail(newInternalError(next.left))
        const remaining = isEmpty(pred) ? Number(count) - pred.limit : undefined
        return {
          ...list,
          metadata: {
            resourceVersion: withRev.toString(),
            continue: next.right,
            ...(remaining === undefined ? {} : { remainingItemCount: remaining })
          }
        }
      }
      return list
    })

  const watch: StorageShape["watch"] = (key, options) =>
    Effect.gen(function* () {
      const recursive = options.recursive === true
      const prepared = yield* prepare(key, recursive)
      const rev = parseWatchResourceVersion(options.resourceVersion, gr)
      if (Either.isLeft(rev)) return yield* Effect.fail(rev.left)
      return watchChan(
        {
          client,
          transformer,
          groupResource: gr,
          typeMeta: config.typeMeta ?? {},
          getCurrentResourceVersion: currentRevision
        },
        prepared,
        rev.right,
        options
      )
    })

  const stats: StorageShape["stats"] = (key) =>
    Effect.gen(function* () {
      let prepared = yield* prepare(key, true)
      if (!prepared.endsWith("/")) prepared += "/"
      const r = yield* etcd(client.kv.get(prepared, { prefix: true, countOnly: true }))
      return { objectCount: Number(r.count) }
    })

  const compactRevision = Effect.map(
    Effect.orElseSucceed(readCompactRevision(client), () => lastCompactRevision),
    (rev) => {
      if (rev > lastCompactRevision) lastCompactRevision = rev
      return lastCompactRevision
    }
  )

  return {
    create,
    delete: del,
    watch,
    get,
    getList,
    guaranteedUpdate,
    stats,
    readinessCheck: Effect.asVoid(currentRevision),
    requestWatchProgress: client.requestProgress({ requireLeader: true }),
    requestWatchProgressSupported: requestWatchProgressCheck(client),
    getCurrentResourceVersion: currentRevision,
    compactRevision
  }
}

const textDecoder = new TextDecoder()
const textOf = (b: Uint8Array): string => textDecoder.decode(b)

const prefixEndText = (key: string): Uint8Array => prefixEnd(toBytes(key))

/** The etcd3 store as a Layer providing `Storage` (one resource) over `EtcdClient`. */
export const layer = (config: Etcd3StoreConfig): Layer.Layer<Storage, never, EtcdClient> =>
  Layer.effect(Storage, make(config))

/** `Etcd3Store.make` / `Etcd3Store.layer` */
export const Etcd3Store = { make, makeWith, layer } as const
