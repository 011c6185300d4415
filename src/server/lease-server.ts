/**
 * The Lease service (etcd's v3rpc/lease.go) over the Lessor.
 *
 * LeaseKeepAlive is a bidi stream answered in order, one renew at a time, as etcd's loop does: the
 * header is taken before the renew, a lease that is gone answers TTL 0, and the end of the
 * client's side (half-close) ends the stream with OK — unlike Watch.
 *
 * Auth (etcd 3.4): LeaseGrant and LeaseRevoke fail on a bad token (they go through raft, which
 * resolves it); LeaseRevoke needs WRITE on every key attached to the lease. LeaseTimeToLive with
 * keys needs READ on each attached key (etcd 3.4.26's fix of CVE-2023-32082; 3.4.23 lists them
 * to anyone). KeepAlive and LeaseLeases check nothing, as etcd.
 */
import { Effect } from "effect"
import type { LessorShape } from "../lease/lessor.js"
import type { LeaseKeepAliveRequest, LeaseKeepAliveResponseInit } from "../proto/messages.js"
import type { LeaseServer } from "../proto/services.js"
import { type CallRunner, readBatch, writeAll } from "./grpc-bridge.js"
import type { MakeHeader } from "./header.js"
import { costLeaseGrant, type Quota } from "./quota.js"
import { toBigInt, toNumber } from "./kv-pb.js"
import { EtcdError, GrpcCode } from "../errors.js"
import { AuthErrors } from "../auth/errors.js"
import { type AuthGuard, authInfoGrpc, needsAuth } from "./auth-guard.js"
import { checkLeasePuts } from "./kv-auth.js"
import type { CorruptGuard } from "./corrupt-check.js"

/** `quota`: the space quota LeaseGrant is checked against (quota.ts); `corrupt`: the CORRUPT alarm's refusals (corrupt-check.ts). */
export const makeLeaseService = (
  runner: CallRunner,
  lessor: LessorShape,
  header: MakeHeader,
  guard: AuthGuard,
  quota?: Quota,
  corrupt?: CorruptGuard
): LeaseServer => ({
  LeaseGrant: runner.unary("LeaseGrant", (req, call) => {
    // etcd's applierV3Corrupt refuses LeaseGrant and LeaseRevoke under CORRUPT
    if (corrupt?.up() === true) return corrupt.refuse()
    const run = Effect.suspend(() => {
      const id = toBigInt(req.ID)
      return lessor.grant(id === 0n ? { ttl: toNumber(req.TTL) } : { id, ttl: toNumber(req.TTL) })
    }).pipe(Effect.map((r) => ({ header: header(r.header.revision), ID: r.id, TTL: r.ttl })))
    const authed = needsAuth(guard, call) ? Effect.zipRight(authInfoGrpc(guard, call), run) : run
    // the quota first, as etcd's quotaLeaseServer wraps the lease server
    return quota === undefined ? authed : Effect.zipRight(quota.check(costLeaseGrant), authed)
  }),

  LeaseRevoke: runner.unary("LeaseRevoke", (req, call) => {
    if (corrupt?.up() === true) return corrupt.refuse()
    const run = Effect.suspend(() => lessor.revoke(toBigInt(req.ID))).pipe(
      Effect.map((r) => ({ header: header(r.header.revision) }))
    )
    if (!needsAuth(guard, call)) return run
    return authInfoGrpc(guard, call).pipe(
      Effect.flatMap((ai) => checkLeasePuts(guard.store, lessor, ai, toBigInt(req.ID))),
      Effect.zipRight(run)
    )
  }),

  LeaseTimeToLive: runner.unary("LeaseTimeToLive", (req, call) =>
    (req.keys && guard.store.enabled
      ? authInfoGrpc(guard, call).pipe(
          Effect.flatMap((ai) =>
            ai === undefined
              ? Effect.fail(AuthErrors.userEmpty.grpc())
              : Effect.flatMap(lessor.timeToLive({ id: toBigInt(req.ID), keys: true }), (r) => {
                  for (const key of r.keys) {
                    const e = guard.store.isRangePermitted(ai, key, undefined)
                    if (e !== undefined) return Effect.fail(e.grpc())
                  }
                  return Effect.void
                })
          )
        )
      : Effect.void
    ).pipe(
      Effect.zipRight(Effect.suspend(() => lessor.timeToLive({ id: toBigInt(req.ID), keys: req.keys }))),
      Effect.map((r) => ({
        header: header(r.header.revision),
        ID: r.id,
        TTL: r.ttl,
        ...(r.grantedTTL === 0 ? {} : { grantedTTL: r.grantedTTL }),
        ...(r.keys.length === 0 ? {} : { keys: r.keys })
      }))
    )
  ),

  LeaseLeases: runner.unary("LeaseLeases", () =>
    Effect.map(lessor.leases, (r) => ({
      header: header(r.header.revision),
      leases: r.leases.map((l) => ({ ID: l.id }))
    }))
  ),

  LeaseKeepAlive: runner.bidi("LeaseKeepAlive", (call) =>
    Effect.gen(function* () {
      while (true) {
        const batch = yield* readBatch<LeaseKeepAliveRequest>(call).pipe(
          Effect.mapError((e) =>
            e instanceof EtcdError ? e : new EtcdError({ code: GrpcCode.Canceled, message: "context canceled" })
          )
        )
        if (batch === null) return
        const out: Array<LeaseKeepAliveResponseInit> = []
        for (const req of batch) {
          const r = yield* lessor.keepAlive(toBigInt(req.ID))
          out.push({ header: header(r.header.revision), ID: r.id, TTL: r.ttl })
        }
        yield* writeAll(call, out)
      }
    })
  )
})
