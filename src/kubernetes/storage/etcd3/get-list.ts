/**
 * GetList (etcd3/store.go): a list read from etcd at one revision, page by page. The continue
 * token or the resourceVersion (with its match rule) says where and at which revision the read
 * starts; a selector that drops objects makes the store read further, doubling its page size up
 * to maxLimit, until the page is full or the range ends; a next page's token carries the revision.
 */
import { Effect, Either } from "effect"
import { prefixEnd } from "../../../client/key-range.js"
import { toBytes } from "../../../client/key-value.js"
import type { EtcdError } from "../../../errors.js"
import type { KubeList, KubeObject } from "../../api/object-meta.js"
import {
  newBadRequest,
  newInternalError,
  newResourceExpired,
  newTooLargeResourceVersion,
  type StatusError
} from "../../api/status.js"
import { decodeContinue, encodeContinue } from "../continue.js"
import type { ListOptions } from "../interfaces.js"
import { Everything, isEmpty, matches, type SelectionPredicate } from "../selection-predicate.js"
import { parseResourceVersion } from "../versioner.js"
import { decode } from "./decoder.js"
import { compactedList, CONTINUE_TOO_OLD, fromEtcd, isCompacted, isFutureRevision, LIST_TOO_OLD } from "./errors.js"
import { prepare, type StoreDeps, validateMinimumResourceVersion } from "./store-deps.js"

/** maxLimit: how far a filtered list's internal page size may double */
export const MAX_LIMIT = 10000

const textDecoder = new TextDecoder()
const textOf = (b: Uint8Array): string => textDecoder.decode(b)

const prefixEndText = (key: string): Uint8Array => prefixEnd(toBytes(key))

/** interpretListError, and a future revision as "too large" */
const listError = (
  s: StoreDeps,
  e: EtcdError,
  paging: boolean,
  continueKey: string,
  keyPrefix: string,
  withRev: bigint
): Effect.Effect<never, StatusError> => {
  if (isCompacted(e)) {
    if (!paging) return Effect.fail(compactedList())
    const token = encodeContinue(continueKey, keyPrefix, -1n)
    return Effect.fail(
      Either.isLeft(token) ? newResourceExpired(LIST_TOO_OLD) : newResourceExpired(CONTINUE_TOO_OLD, token.right)
    )
  }
  if (isFutureRevision(e)) {
    return Effect.flatMap(
      Effect.orElseSucceed(s.currentRevision, () => 0n),
      (cur) => Effect.fail(newTooLargeResourceVersion(withRev, cur, 0))
    )
  }
  return Effect.fail(fromEtcd(e))
}

/** Where a list's first read starts, and at which revision (0: etcd's current one). */
interface ListStart {
  readonly fromKey: string
  readonly withRev: bigint
  /** the continue token's key ("" without a token) */
  readonly continueKey: string
}

/** The continue token, or the resourceVersion and its match rule, as the first read's key and revision. */
const listStart = (
  keyPrefix: string,
  recursive: boolean,
  pred: SelectionPredicate,
  options: ListOptions
): Either.Either<ListStart, StatusError> => {
  let fromRV: bigint | undefined
  if (options.resourceVersion !== undefined && options.resourceVersion !== "") {
    const parsed = parseResourceVersion(options.resourceVersion)
    if (Either.isLeft(parsed)) return Either.left(newBadRequest(`invalid resource version: ${parsed.left}`))
    fromRV = parsed.right
  }
  if (recursive && pred.continue !== "") {
    const decoded = decodeContinue(pred.continue, keyPrefix)
    if (Either.isLeft(decoded)) return Either.left(newBadRequest(`invalid continue token: ${decoded.left}`))
    if (options.resourceVersion !== undefined && options.resourceVersion !== "" && options.resourceVersion !== "0") {
      return Either.left(newBadRequest("specifying resource version is not allowed when using continue"))
    }
    const continueKey = decoded.right.fromKey
    return Either.right({ fromKey: continueKey, withRev: decoded.right.rv > 0n ? decoded.right.rv : 0n, continueKey })
  }
  let withRev = 0n
  if (fromRV !== undefined) {
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
        return Either.left(newInternalError(`unknown ResourceVersionMatch value: ${options.resourceVersionMatch}`))
    }
  }
  return Either.right({ fromKey: keyPrefix, withRev, continueKey: "" })
}

/** The list of what was read; a page that stopped short of the range's end carries the next token. */
const listResult = (
  items: Array<KubeObject>,
  withRev: bigint,
  hasMore: boolean,
  lastKey: string | undefined,
  keyPrefix: string,
  pred: SelectionPredicate,
  count: bigint
): Either.Either<KubeList, StatusError> => {
  const list: KubeList = { metadata: { resourceVersion: withRev.toString() }, items }
  if (!hasMore || lastKey === undefined) return Either.right(list)
  const next = encodeContinue(lastKey + "\x00", keyPrefix, withRev)
  if (Either.isLeft(next)) return Either.left(newInternalError(next.left))
  const remaining = isEmpty(pred) ? Number(count) - pred.limit : undefined
  return Either.right({
    ...list,
    metadata: {
      resourceVersion: withRev.toString(),
      continue: next.right,
      ...(remaining === undefined ? {} : { remainingItemCount: remaining })
    }
  })
}

/** storage.Interface.GetList */
export const getList = (s: StoreDeps, key: string, options: ListOptions): Effect.Effect<KubeList, StatusError> =>
  Effect.gen(function* () {
    const { client, transformer } = s
    const recursive = options.recursive === true
    const keyPrefix = yield* prepare(s, key, recursive)
    const pred = options.predicate ?? Everything
    const paging = pred.limit > 0
    let limit = pred.limit
    const rangeEnd = recursive ? prefixEndText(keyPrefix) : undefined
    const start = yield* listStart(keyPrefix, recursive, pred, options)
    let fromKey = start.fromKey
    let withRev = start.withRev

    const items: Array<KubeObject> = []
    let lastKey: string | undefined
    let hasMore = false
    let count = 0n
    for (;;) {
      const r = yield* client.kv
        .get(fromKey, {
          ...(rangeEnd === undefined ? {} : { rangeEnd }),
          ...(paging ? { limit } : {}),
          ...(withRev !== 0n ? { revision: withRev } : {})
        })
        .pipe(Effect.catchAll((e) => listError(s, e, pred.continue !== "", start.continueKey, keyPrefix, withRev)))
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
      fromKey = lastKey + "\x00"
    }
    return yield* listResult(items, withRev, hasMore, lastKey, keyPrefix, pred, count)
  })
