/**
 * The Lease API (clientv3's `Lease`): grant, revoke, timeToLive, leases, and keep-alive.
 *
 * `keepAlive(id)` is a scoped fiber: it renews the lease every TTL/3 over a LeaseKeepAlive stream,
 * reconnecting (with backoff) when the stream breaks, until its scope closes. When the lease is gone
 * — the server answers TTL 0 (expired or revoked), or no renewal landed before the last granted TTL
 * ran out — `lost` completes with a LeaseLost saying which.
 */
import type * as grpc from "@grpc/grpc-js"
import {
  Cause,
  Clock,
  Deferred,
  Effect,
  Either,
  Exit,
  Mailbox,
  Option,
  Ref,
  Schedule,
  Schema,
  type Scope,
  Stream
} from "effect"
import { EtcdError, GrpcCode } from "../errors.js"
import type * as M from "../proto/index.js"
import { type ClientConnectionShape, fromServiceError, unaryMethod } from "./connection.js"
import type { ResponseHeader } from "./key-value.js"
import { big, fromWireHeader, i64 } from "./wire.js"

/** What `lease.grant` answers: the lease's id and granted TTL. */
export interface LeaseGrantResult {
  readonly header: ResponseHeader
  readonly id: bigint
  /** granted TTL in seconds (the server may raise a TTL below its minimum) */
  readonly ttl: bigint
}

/** What `lease.timeToLive` answers: the remaining and granted TTL, and the attached keys when asked for. */
export interface LeaseTimeToLiveResult {
  readonly header: ResponseHeader
  readonly id: bigint
  /** remaining seconds; -1n when the lease does not exist (expired or revoked) */
  readonly ttl: bigint
  readonly grantedTtl: bigint
  /** attached keys (with `keys: true`) */
  readonly keys: ReadonlyArray<Uint8Array>
}

/** One renewal of a lease: its id and renewed TTL. */
export interface LeaseKeepAliveResult {
  readonly header: ResponseHeader
  readonly id: bigint
  /** the renewed TTL in seconds */
  readonly ttl: bigint
}

/** A kept-alive lease is gone. */
export class LeaseLost extends Schema.TaggedError<LeaseLost>()("LeaseLost", {
  id: Schema.BigInt,
  /** "expired": the server no longer has it (TTL 0: expired or revoked); "deadline": no renewal
   * reached the server before its TTL ran out; "failed": the keep-alive stream failed for good */
  reason: Schema.Literal("expired", "deadline", "failed"),
  message: Schema.String,
  cause: Schema.optional(Schema.UndefinedOr(EtcdError))
}) {}

/** A lease kept alive by `lease.keepAlive` while its scope is open. */
export interface KeepAlive {
  readonly id: bigint
  /** completes when the lease is lost; never while it is kept alive */
  readonly lost: Effect.Effect<LeaseLost>
  /** the latest renewal, if any yet */
  readonly latest: Effect.Effect<Option.Option<LeaseKeepAliveResult>>
}

/** The Lease API (clientv3's `Lease`): grant, revoke, timeToLive, leases, and keep-alive. */
export interface Lease {
  /** a new lease of `ttlSeconds` (the server picks the id unless `options.id` is given) */
  readonly grant: (
    ttlSeconds: bigint | number,
    options?: { readonly id?: bigint }
  ) => Effect.Effect<LeaseGrantResult, EtcdError>
  /** revokes the lease, deleting the keys attached to it */
  readonly revoke: (id: bigint) => Effect.Effect<{ readonly header: ResponseHeader }, EtcdError>
  /** the lease's remaining TTL, and with `keys: true` the keys attached to it */
  readonly timeToLive: (
    id: bigint,
    options?: { readonly keys?: boolean }
  ) => Effect.Effect<LeaseTimeToLiveResult, EtcdError>
  /** the ids of every lease the server holds */
  readonly leases: () => Effect.Effect<
    { readonly header: ResponseHeader; readonly ids: ReadonlyArray<bigint> },
    EtcdError
  >
  /** one renewal (etcdctl `lease keep-alive --once`); fails with LeaseLost if the lease is gone */
  readonly keepAliveOnce: (id: bigint) => Effect.Effect<LeaseKeepAliveResult, LeaseLost | EtcdError>
  /** every renewal as it happens; fails with LeaseLost when the lease is gone */
  readonly keepAliveStream: (id: bigint) => Stream.Stream<LeaseKeepAliveResult, LeaseLost>
  /** keeps the lease alive for as long as the scope is open */
  readonly keepAlive: (id: bigint) => Effect.Effect<KeepAlive, never, Scope.Scope>
}

const Grant = unaryMethod<M.LeaseGrantRequestInit, M.LeaseGrantResponse>("Lease", "LeaseGrant")
const Revoke = unaryMethod<M.LeaseRevokeRequestInit, M.LeaseRevokeResponse>("Lease", "LeaseRevoke")
const TimeToLive = unaryMethod<M.LeaseTimeToLiveRequestInit, M.LeaseTimeToLiveResponse>("Lease", "LeaseTimeToLive")
const Leases = unaryMethod<object, M.LeaseLeasesResponse>("Lease", "LeaseLeases")
const KeepAlivePath = unaryMethod<M.LeaseKeepAliveRequestInit, M.LeaseKeepAliveResponse>("Lease", "LeaseKeepAlive")

/** A lease id as etcdctl prints it: 16 hex digits. */
export const leaseHex = (id: bigint): string => BigInt.asUintN(64, id).toString(16).padStart(16, "0")

const lostExpired = (id: bigint) =>
  new LeaseLost({ id, reason: "expired", message: `lease ${leaseHex(id)} expired or revoked` })
const lostDeadline = (id: bigint) =>
  new LeaseLost({ id, reason: "deadline", message: `lease ${leaseHex(id)} keep-alive deadline exceeded` })

type Session =
  | { readonly _tag: "Retry"; readonly progressed: boolean; readonly error: EtcdError }
  | { readonly _tag: "Lost"; readonly error: LeaseLost }

export interface LeaseOptions {
  readonly retrySchedule: Schedule.Schedule<unknown>
  /** the keep-alives' time: the Clock the client was built with */
  readonly clock: Clock.Clock
}

/** The keep-alive stream's next event: a response, or the call's end with its status. */
type CallEvent = M.LeaseKeepAliveResponse

/**
 * One LeaseKeepAlive call, as a scoped fiber on the Clock: send a renewal, wait for its answer
 * until the lease's deadline (last renewal + its TTL), send the next a third of the TTL later
 * (clientv3's rhythm, at least 500 ms). Ends when the lease is lost or the call ends; the caller
 * retries a transient end. Every timer is the Clock's, so a TestClock drives it.
 */
const keepAliveSession = (
  connection: ClientConnectionShape,
  id: bigint,
  deadline: Ref.Ref<number | undefined>,
  out: Mailbox.Mailbox<LeaseKeepAliveResult, LeaseLost>
): Effect.Effect<Session> =>
  Effect.gen(function* () {
    const events = yield* Mailbox.make<CallEvent, grpc.StatusObject>()
    const call = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const c: grpc.ClientDuplexStream<M.LeaseKeepAliveRequestInit, M.LeaseKeepAliveResponse> =
          connection.client.makeBidiStreamRequest(
            KeepAlivePath.path,
            KeepAlivePath.serialize,
            KeepAlivePath.deserialize,
            connection.metadata()
          )
        c.on("data", (r: M.LeaseKeepAliveResponse) => events.unsafeOffer(r))
        c.on("status", (status: grpc.StatusObject) => events.unsafeDone(Exit.fail(status)))
        // grpc-js emits "error" beside "status" for the same end; the status carries it
        c.on("error", () => {})
        return c
      }),
      (c) => Effect.sync(() => c.cancel())
    )
    let progressed = false
    let sendAt = yield* Clock.currentTimeMillis
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const until = yield* Ref.get(deadline)
      if (until !== undefined && now >= until) return { _tag: "Lost", error: lostDeadline(id) } as Session
      if (sendAt <= now) {
        call.write({ ID: i64(id) })
        sendAt = Number.POSITIVE_INFINITY
      }
      const wake = Math.min(sendAt, until ?? Number.POSITIVE_INFINITY)
      const next = yield* Effect.either(
        wake === Number.POSITIVE_INFINITY ? events.take : Effect.timeout(events.take, wake - now)
      )
      if (Either.isLeft(next)) {
        const end = next.left
        if (end instanceof Cause.TimeoutException) continue
        if (end instanceof Cause.NoSuchElementException) return retry(progressed, fromServiceError({}))
        return ended(id, progressed, end)
      }
      progressed = true
      const ttl = big(next.right.TTL)
      if (ttl <= 0n) return { _tag: "Lost", error: lostExpired(id) } as Session
      const at = yield* Clock.currentTimeMillis
      yield* Ref.set(deadline, at + Number(ttl) * 1000)
      yield* out.offer({ header: fromWireHeader(next.right.header), id: big(next.right.ID), ttl })
      sendAt = at + Math.max((Number(ttl) * 1000) / 3, 500)
    }
  }).pipe(Effect.scoped)

const retry = (progressed: boolean, error: EtcdError): Session => ({ _tag: "Retry", progressed, error })

/** A call's end: Unavailable, Internal, Canceled or OK are retried; any other code loses the lease. */
const ended = (id: bigint, progressed: boolean, status: grpc.StatusObject): Session => {
  const error = fromServiceError(status)
  const transient =
    status.code === GrpcCode.Unavailable ||
    status.code === GrpcCode.Internal ||
    status.code === GrpcCode.Canceled ||
    status.code === GrpcCode.OK
  return transient
    ? retry(progressed, error)
    : { _tag: "Lost", error: new LeaseLost({ id, reason: "failed", message: error.message, cause: error }) }
}

export const makeLease = (connection: ClientConnectionShape, options: LeaseOptions): Lease => {
  const keepAliveStream = (id: bigint): Stream.Stream<LeaseKeepAliveResult, LeaseLost> =>
    Stream.unwrapScoped(
      Effect.gen(function* () {
        const out = yield* Mailbox.make<LeaseKeepAliveResult, LeaseLost>()
        /** Clock ms after which the lease has certainly expired (last renewal + its TTL) */
        const deadline = yield* Ref.make<number | undefined>(undefined)
        const loop = Effect.gen(function* () {
          const driver = yield* Schedule.driver(options.retrySchedule)
          while (true) {
            const outcome = yield* keepAliveSession(connection, id, deadline, out)
            if (outcome._tag === "Lost") return yield* out.fail(outcome.error)
            yield* Effect.logDebug(`lease ${leaseHex(id)} keep-alive stream ended: ${outcome.error.message}; retrying`)
            if (outcome.progressed) yield* driver.reset
            const next = yield* Effect.either(driver.next(undefined))
            if (Either.isLeft(next)) {
              return yield* out.fail(
                new LeaseLost({ id, reason: "failed", message: outcome.error.message, cause: outcome.error })
              )
            }
          }
        })
        yield* Effect.forkScoped(Effect.withClock(loop, options.clock))
        return Mailbox.toStream(out)
      })
    )

  return {
    grant: (ttl, grantOptions = {}) =>
      Effect.flatMap(
        Effect.suspend(() => connection.unary(Grant, { TTL: i64(ttl), ID: i64(grantOptions.id) })),
        (r) =>
          r.error !== ""
            ? Effect.fail(new EtcdError({ code: GrpcCode.Unknown, message: r.error }))
            : Effect.succeed({ header: fromWireHeader(r.header), id: big(r.ID), ttl: big(r.TTL) })
      ),
    revoke: (id) =>
      Effect.map(
        Effect.suspend(() => connection.unary(Revoke, { ID: i64(id) })),
        (r) => ({ header: fromWireHeader(r.header) })
      ),
    timeToLive: (id, ttlOptions = {}) =>
      Effect.map(
        Effect.suspend(() => connection.unary(TimeToLive, { ID: i64(id), keys: ttlOptions.keys === true })),
        (r) => ({
          header: fromWireHeader(r.header),
          id: big(r.ID),
          ttl: big(r.TTL),
          grantedTtl: big(r.grantedTTL),
          keys: r.keys
        })
      ),
    leases: () =>
      Effect.map(
        Effect.suspend(() => connection.unary(Leases, {})),
        (r) => ({ header: fromWireHeader(r.header), ids: r.leases.map((l) => big(l.ID)) })
      ),
    keepAliveOnce: (id) => {
      const once = keepAliveStream(id).pipe(
        Stream.runHead,
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(lostExpired(id)),
            onSome: Effect.succeed
          })
        )
      )
      // A stream call has no gRPC deadline: bound it like a unary call.
      const timeout = connection.requestTimeout
      return timeout === undefined
        ? once
        : Effect.timeoutFail(once, {
            duration: timeout,
            onTimeout: () => new EtcdError({ code: GrpcCode.DeadlineExceeded, message: "context deadline exceeded" })
          })
    },
    keepAliveStream,
    keepAlive: (id) =>
      Effect.gen(function* () {
        const lost = yield* Deferred.make<LeaseLost>()
        const latest = yield* Ref.make(Option.none<LeaseKeepAliveResult>())
        yield* keepAliveStream(id).pipe(
          Stream.runForEach((r) => Ref.set(latest, Option.some(r))),
          Effect.catchAll((error) => Deferred.succeed(lost, error)),
          Effect.forkScoped
        )
        return { id, lost: Deferred.await(lost), latest: Ref.get(latest) }
      })
  }
}
