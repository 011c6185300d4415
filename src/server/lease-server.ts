/**
 * The Lease service (etcd's v3rpc/lease.go) over the Lessor.
 *
 * LeaseKeepAlive is a bidi stream answered in order, one renew at a time, as etcd's loop does: the
 * header is taken before the renew, a lease that is gone answers TTL 0, and the end of the
 * client's side (half-close) ends the stream with OK — unlike Watch.
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

/** `quota`: the space quota LeaseGrant is checked against (quota.ts). */
export const makeLeaseService = (
  runner: CallRunner,
  lessor: LessorShape,
  header: MakeHeader,
  quota?: Quota
): LeaseServer => ({
  LeaseGrant: runner.unary("LeaseGrant", (req) =>
    Effect.suspend(() => {
      const id = toBigInt(req.ID)
      const grant = lessor.grant(id === 0n ? { ttl: toNumber(req.TTL) } : { id, ttl: toNumber(req.TTL) })
      return quota === undefined ? grant : Effect.zipRight(quota.check(costLeaseGrant), grant)
    }).pipe(Effect.map((r) => ({ header: header(r.header.revision), ID: r.id, TTL: r.ttl })))),

  LeaseRevoke: runner.unary("LeaseRevoke", (req) =>
    Effect.suspend(() => lessor.revoke(toBigInt(req.ID))).pipe(
      Effect.map((r) => ({ header: header(r.header.revision) }))
    )),

  LeaseTimeToLive: runner.unary("LeaseTimeToLive", (req) =>
    Effect.suspend(() => lessor.timeToLive({ id: toBigInt(req.ID), keys: req.keys })).pipe(
      Effect.map((r) => ({
        header: header(r.header.revision),
        ID: r.id,
        TTL: r.ttl,
        ...(r.grantedTTL === 0 ? {} : { grantedTTL: r.grantedTTL }),
        ...(r.keys.length === 0 ? {} : { keys: r.keys })
      }))
    )),

  LeaseLeases: runner.unary("LeaseLeases", () =>
    Effect.map(lessor.leases, (r) => ({
      header: header(r.header.revision),
      leases: r.leases.map((l) => ({ ID: l.id }))
    }))),

  LeaseKeepAlive: runner.bidi("LeaseKeepAlive", (call) =>
    Effect.gen(function*() {
      while (true) {
        const batch = yield* readBatch<LeaseKeepAliveRequest>(call).pipe(
          Effect.mapError(() => new EtcdError({ code: GrpcCode.Canceled, message: "context canceled" }))
        )
        if (batch === null) return
        const out: Array<LeaseKeepAliveResponseInit> = []
        for (const req of batch) {
          const r = yield* lessor.keepAlive(toBigInt(req.ID))
          out.push({ header: header(r.header.revision), ID: r.id, TTL: r.ttl })
        }
        yield* writeAll(call, out)
      }
    }))
})
