/**
 * What a Watch stream does with each request it reads (etcd's v3rpc/watch.go, recvLoop's cases).
 * Create → WatchStream.watch, then a created (or created+canceled) control response; cancel →
 * WatchStream.cancel, then a canceled response (an unknown id gets none); progress →
 * RequestProgressAll. Control responses are queued in the stream's frames (`out`), written once
 * per turn of the event loop.
 *
 * Two ways, same steps: `handleNow` does a create or cancel as plain calls when no credential has
 * to be resolved; `handle` is the Effect way (auth, progress, a WatchStream without the plain
 * calls), run by recv in one fiber per batch of requests.
 */
import { Effect } from "effect"
import { statusText } from "../auth/errors.js"
import type { WatchCreateRequest, WatchRequest, WatchResponseInit } from "../proto/messages.js"
import { WatchError } from "../watch/errors.js"
import type { WatchStream } from "../watch/watch-stream.js"
import { type FilterType, toWatchId, type WatchId } from "../watch/watcher.js"
import { type AuthGuard, authInfoOf, type CallWithMetadata, needsAuth } from "./auth-guard.js"
import { toNumber } from "./kv-pb.js"
import type { ServerWatchStream } from "./server-watch-stream.js"
import { type CtrlKind, INVALID_WATCH_ID, type Mutable } from "./watch-send.js"

const COMPACTED_REASON = "etcdserver: mvcc: required revision has been compacted"

const ZERO_KEY = new Uint8Array([0])
const FROM_KEY = new Uint8Array(0)

/**
 * etcd 3.4's isWatchPermitted: the stream's credential (resolved at each create) needs READ on the
 * requested range; a refusal is a created+canceled response whose cancel_reason is the gRPC status
 * text of the error ("rpc error: code = … desc = etcdserver: …"). The range is the one etcd's
 * watch server has rewritten by then: an empty key is "\0", and a range_end of "\0" (every key
 * from the key on) has become empty — so such a watch is checked as a read of its key alone.
 */
const watchDenied = (guard: AuthGuard | undefined, call: CallWithMetadata, c: WatchCreateRequest) => {
  if (guard === undefined || !needsAuth(guard, call)) return Effect.succeed(undefined)
  const key = c.key.length === 0 ? ZERO_KEY : c.key
  const end = c.range_end.length === 1 && c.range_end[0] === 0 ? FROM_KEY : c.range_end
  return authInfoOf(guard, call).pipe(
    Effect.flatMap((ai) => Effect.succeed(guard.store.isRangePermitted(ai, key, end))),
    Effect.merge,
    Effect.map((e) => (e === undefined ? undefined : statusText(e.grpc())))
  )
}

/** The key range of a create request (etcd's v3rpc/watch.go, recvLoop). */
const normaliseRange = (c: WatchCreateRequest): { key: Uint8Array; end: Uint8Array | undefined } => {
  const key = c.key.byteLength === 0 ? ZERO_KEY : c.key
  const raw = c.range_end
  if (raw.byteLength === 0) return { key, end: undefined }
  if (raw.byteLength === 1 && raw[0] === 0) return { key, end: FROM_KEY }
  return { key, end: raw }
}

/** The watchable store's request for a create request starting at `startRev` (≥ 0). */
const storeWatchRequest = (c: WatchCreateRequest, startRev: number): Parameters<WatchStream["watch"]>[0] => {
  const { key, end } = normaliseRange(c)
  return {
    id: toWatchId(c.watch_id),
    key,
    end,
    startRev,
    filters: c.filters as ReadonlyArray<FilterType>,
    prevKv: c.prev_kv
  }
}

/** etcd's answer to a create it refuses: created and canceled at once, with the reason */
const createFailed = (s: ServerWatchStream, reason: string): WatchResponseInit => ({
  header: s.header(s.ws.rev()),
  watch_id: INVALID_WATCH_ID,
  created: true,
  canceled: true,
  cancel_reason: reason
})

/** the stream's per-watcher options, once the watcher is registered */
const onCreated = (s: ServerWatchStream, id: WatchId, c: WatchCreateRequest): void => {
  if (c.progress_notify) s.state.progress.set(id, true)
  if (c.fragment) s.state.fragment.add(id)
  if (c.progress_notify) s.startTicker()
}

/** the per-watcher options dropped with a cancelled watcher */
const onCanceled = (s: ServerWatchStream, id: WatchId): void => {
  s.state.progress.delete(id)
  s.state.fragment.delete(id)
}

/** queued behind whatever the send loop left in `out`; recv writes them once per batch it read */
const ctrl = (s: ServerWatchStream, id: WatchId, kind: CtrlKind, response: WatchResponseInit): Effect.Effect<void> =>
  Effect.sync(() => s.state.onCtrl(id, kind, response, s.out))

const create = (s: ServerWatchStream, c: WatchCreateRequest): Effect.Effect<void> =>
  Effect.flatMap(watchDenied(s.guard, s.call, c), (denied) => {
    if (denied !== undefined) {
      return ctrl(s, INVALID_WATCH_ID, "failed", createFailed(s, denied))
    }
    const startRev = toNumber(c.start_revision)
    if (startRev < 0) {
      return ctrl(s, INVALID_WATCH_ID, "failed", createFailed(s, COMPACTED_REASON))
    }
    return s.ws.watch(storeWatchRequest(c, startRev)).pipe(
      Effect.matchEffect({
        onFailure: (e) => ctrl(s, INVALID_WATCH_ID, "failed", createFailed(s, e.message)),
        onSuccess: (id) => {
          onCreated(s, id, c)
          const response: Mutable<WatchResponseInit> = { header: s.header(s.ws.rev()), created: true }
          if (id !== 0) response.watch_id = id
          return ctrl(s, id, "created", response)
        }
      })
    )
  })

const cancel = (s: ServerWatchStream, rawId: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    const id = toWatchId(rawId)
    return s.ws.cancel(id).pipe(
      Effect.matchEffect({
        // an unknown id gets no response ("mvcc: watcher does not exist" is swallowed)
        onFailure: () => Effect.void,
        onSuccess: () => {
          onCanceled(s, id)
          const response: Mutable<WatchResponseInit> = { header: s.header(s.ws.rev()), canceled: true }
          if (id !== 0) response.watch_id = id
          return ctrl(s, id, "canceled", response)
        }
      })
    )
  })

/**
 * A create or cancel handled as plain calls, when no credential has to be resolved (no auth)
 * and the stream offers them: the same steps as `create` and `cancel`, without an Effect per
 * request. False: the request goes the Effect way (`handle`).
 */
export const handleNow = (s: ServerWatchStream, req: WatchRequest): boolean => {
  const { ws, state } = s
  if (req.request_union === "create_request") {
    const c = req.create_request
    if (c == null || ws.unsafeWatch === undefined) return false
    if (s.guard !== undefined && needsAuth(s.guard, s.call)) return false
    const startRev = toNumber(c.start_revision)
    if (startRev < 0) return false
    let id: WatchId
    try {
      id = ws.unsafeWatch(storeWatchRequest(c, startRev))
    } catch (e) {
      if (!(e instanceof WatchError)) throw e
      state.onCtrl(INVALID_WATCH_ID, "failed", createFailed(s, e.message), s.out)
      return true
    }
    onCreated(s, id, c)
    state.onCtrlFlag(id, "created", ws.rev(), s.out)
    return true
  }
  if (req.request_union === "cancel_request") {
    const c = req.cancel_request
    if (c == null || ws.unsafeCancel === undefined) return false
    const id = toWatchId(c.watch_id)
    // an unknown id gets no response ("mvcc: watcher does not exist" is swallowed)
    if (!ws.unsafeCancel(id)) return true
    onCanceled(s, id)
    state.onCtrlFlag(id, "canceled", ws.rev(), s.out)
    return true
  }
  return false
}

/** A request the Effect way (auth, progress, or a stream without the plain calls). */
export const handle = (s: ServerWatchStream, req: WatchRequest): Effect.Effect<void> => {
  switch (req.request_union) {
    case "create_request":
      return req.create_request == null ? Effect.void : create(s, req.create_request)
    case "cancel_request":
      return req.cancel_request == null ? Effect.void : cancel(s, req.cancel_request.watch_id)
    case "progress_request":
      // etcd ≥ 3.5.13: answered (watch id -1, through the watch channel, so after every event
      // already queued) only when every watcher of the stream is synced; otherwise dropped.
      return req.progress_request == null ? Effect.void : Effect.asVoid(s.ws.requestProgressAll)
    default:
      // an empty or unknown request type is ignored; the stream stays open
      return Effect.void
  }
}
