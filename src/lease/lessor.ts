/**
 * The lessor (etcd's server/lease): grants leases, keeps keys attached to them, revokes them on
 * request or expiry, and persists them in the backend's "lease" bucket.
 *
 * - Grant: given id or a random positive one; TTL raised to the minimum TTL; too large → error.
 * - Revoke: the attached keys are deleted in ONE revision (sorted key order) and the lease record
 *   is deleted in the same backend batch, so watchers see one atomic set of DELETE events.
 * - Renew (KeepAlive): restarts the countdown and answers the granted TTL.
 * - Expiry: a fiber in the layer's scope checks every 500 ms and revokes up to 500 expired
 *   leases per round (etcd's runLoop with leaseRevokeRate 1000/s). A revoke that fails is retried
 *   later; the loop itself dying fails the member (src/supervision/fatal.ts).
 * - Restart: leases come back from the backend with a fresh countdown (TTL + election timeout,
 *   etcd's Promote) and their keys are re-attached from the store.
 *
 * Time is Effect's Clock (monotonic nanos), so TestClock drives expiry in tests.
 */
import { Context, Deferred, Duration, Effect, Exit, Layer } from "effect"
import { Backend, type BackendError, type BackendShape } from "../backend/backend.js"
import { EtcdError, Errors } from "../errors.js"
import { supervised } from "../supervision/fatal.js"
import { type LeaseAttachments, MvccStore, type ResponseHeader } from "../mvcc/kv.js"
import { RecoveryError } from "../mvcc/recovery-error.js"
import { LessorCore } from "./lessor-core.js"
import { bytesToLeaseId, composeAutoId, isInt64, leaseIdToBytes, NoLease } from "./lease-id.js"
import { decodeLeaseRecord, encodeLeaseRecord, type LeaseRecord } from "./leasepb.js"

/** etcd's MaxLeaseTTL (lease/lessor.go), seconds. */
export const MaxLeaseTTL = 9_000_000_000

/**
 * etcd's minimum lease TTL for a member: ceil(⌊3 × electionTicks / 2⌋ × heartbeat) seconds,
 * with electionTicks = electionTimeout / heartbeat (etcdserver/server.go). 2 s with the defaults
 * (heartbeat 100 ms, election timeout 1000 ms).
 */
export const minLeaseTTLFor = (electionTimeoutMs: number, heartbeatMs: number): number => {
  const ticks = Math.floor(electionTimeoutMs / heartbeatMs)
  return Math.ceil((Math.floor((3 * ticks) / 2) * heartbeatMs) / 1000)
}

/** The lessor's timings and limits: the minimum TTL, the expiry check, the revoke rate and retries. */
export interface LessorConfig {
  /** seconds; shorter grants are raised to it (etcd: derived from the election timeout) */
  readonly minLeaseTTL: number
  /** how often the expiry fiber looks for expired leases (etcd: 500 ms) */
  readonly expiryCheckInterval: Duration.DurationInput
  /** leases revoked per second at most (etcd's leaseRevokeRate); half of it per check */
  readonly revokeRate: number
  /** an expired lease handed out for revoke is looked at again after this (etcd: 3 s) */
  readonly expiredLeaseRetryInterval: Duration.DurationInput
  /** added to every countdown when leases are recovered (etcd: Promote(election timeout)) */
  readonly promoteExtend: Duration.DurationInput
}

/** etcd's defaults: its minimum TTL at the default election timeout, 500 ms checks, 1000 revokes per second. */
export const defaultLessorConfig: LessorConfig = {
  minLeaseTTL: minLeaseTTLFor(1000, 100),
  expiryCheckInterval: Duration.millis(500),
  revokeRate: 1000,
  expiredLeaseRetryInterval: Duration.seconds(3),
  promoteExtend: Duration.seconds(1)
}

// --- requests and responses (etcdserverpb, camelCase; ids as bigint, TTLs in seconds) ---

/** A LeaseGrant request: the TTL, and the id unless the lessor is to pick one. */
export interface LeaseGrantRequest {
  /** 0n/absent: the lessor picks a random positive id */
  readonly id?: bigint | undefined
  readonly ttl: number
}
/** A LeaseGrant response: the lease's id and granted TTL. */
export interface LeaseGrantResponse {
  readonly header: ResponseHeader
  readonly id: bigint
  /** the TTL granted (raised to the minimum TTL) */
  readonly ttl: number
}
/** A LeaseRevoke response: the header of the revision that deleted the lease's keys. */
export interface LeaseRevokeResponse {
  readonly header: ResponseHeader
}
/** A LeaseKeepAlive response: the lease's id and renewed TTL. */
export interface LeaseKeepAliveResponse {
  readonly header: ResponseHeader
  readonly id: bigint
  /** the granted TTL; 0 on the keep-alive stream when the lease is gone */
  readonly ttl: number
}
/** A LeaseTimeToLive request: the lease, and whether its keys are wanted. */
export interface LeaseTimeToLiveRequest {
  readonly id: bigint
  readonly keys?: boolean | undefined
}
/** A LeaseTimeToLive response: the seconds left, the granted TTL and the attached keys when asked for. */
export interface LeaseTimeToLiveResponse {
  readonly header: ResponseHeader
  readonly id: bigint
  /** whole seconds left; -1 when the lease does not exist */
  readonly ttl: number
  readonly grantedTTL: number
  /** attached keys in key order, when asked for */
  readonly keys: ReadonlyArray<Uint8Array>
}
/** One lease in a LeaseLeases response: its id. */
export interface LeaseStatus {
  readonly id: bigint
}
/** A LeaseLeases response: every lease the lessor holds. */
export interface LeaseLeasesResponse {
  readonly header: ResponseHeader
  /** soonest expiry first */
  readonly leases: ReadonlyArray<LeaseStatus>
}

/** The lessor's operations: grant, revoke, renew, keep-alive, time-to-live and the list of leases. */
export interface LessorShape {
  /** the minimum TTL in seconds grants are raised to */
  readonly minLeaseTTL: number
  /** LeaseGrant: "lease already exists", "too large lease TTL" */
  readonly grant: (req: LeaseGrantRequest) => Effect.Effect<LeaseGrantResponse, EtcdError>
  /** LeaseRevoke: deletes the attached keys in one revision; unknown → "requested lease not found" */
  readonly revoke: (id: bigint) => Effect.Effect<LeaseRevokeResponse, EtcdError>
  /** Unary renew: unknown or expired → "requested lease not found" (an expired lease is revoked first) */
  readonly renew: (id: bigint) => Effect.Effect<LeaseKeepAliveResponse, EtcdError>
  /** One LeaseKeepAlive stream message: like `renew`, but a missing lease answers TTL 0, as etcd's stream does */
  readonly keepAlive: (id: bigint) => Effect.Effect<LeaseKeepAliveResponse, EtcdError>
  /** LeaseTimeToLive: unknown → TTL -1 (etcd answers, not fails) */
  readonly timeToLive: (req: LeaseTimeToLiveRequest) => Effect.Effect<LeaseTimeToLiveResponse>
  /** LeaseLeases */
  readonly leases: Effect.Effect<LeaseLeasesResponse>
  /**
   * The member's say over the revocations the lessor makes on its own (an expired lease, by the
   * expiry loop or by a renew that finds it expired): while `refusal` answers an error they are not
   * made, and an expired lease keeps its keys until a later round (the retry interval) may revoke
   * it. The server sets the CORRUPT alarm's refusal, as etcd's applierV3Corrupt refuses the
   * LeaseRevoke its lessor proposes. Replaces the previous one; none by default.
   */
  readonly guardRevocations: (refusal: () => EtcdError | undefined) => void
}

/** The lessor service (etcd's lease.Lessor): leases with TTLs, their attached keys revoked on expiry. */
export class Lessor extends Context.Tag("etcd-effect/Lessor")<Lessor, LessorShape>() {}

const isLeaseNotFound = (e: EtcdError): boolean => e.message === Errors.leaseNotFound().message

const leaseRecordOp = (r: LeaseRecord) =>
  ({ bucket: "lease", key: leaseIdToBytes(r.id), value: encodeLeaseRecord(r) }) as const

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

const corrupt = (message: string) => new RecoveryError({ reason: "LeaseRecovery", message })

/** The lease bucket's records; an unreadable one is start-up corruption (etcd panics). */
const readLeaseRecords = (backend: BackendShape): Effect.Effect<Array<LeaseRecord>, RecoveryError> =>
  Effect.suspend(() => {
    const records: Array<LeaseRecord> = []
    for (const [k, v] of backend.range("lease", new Uint8Array(0), undefined)) {
      let r: LeaseRecord
      let keyId: bigint | undefined
      try {
        r = decodeLeaseRecord(v)
        keyId = bytesToLeaseId(k)
      } catch (e) {
        return Effect.fail(corrupt(`lease bucket: record ${hex(k)} is unreadable: ${(e as Error).message}`))
      }
      if (keyId !== r.id) return Effect.fail(corrupt(`lease bucket: record ${hex(k)} holds lease id ${r.id}`))
      records.push(r)
    }
    return Effect.succeed(records)
  })

const make = (config: LessorConfig) =>
  Effect.gen(function* () {
    const store = yield* MvccStore
    const backend = yield* Backend
    const clock = yield* Effect.clock
    const random = yield* Effect.random

    /** milliseconds on the monotonic clock (TestClock in tests) */
    const now = () => Number(clock.unsafeCurrentTimeNanos() / 1000n) / 1000
    const retryMs = Duration.toMillis(config.expiredLeaseRetryInterval)
    const core = new LessorCore({
      minLeaseTTL: config.minLeaseTTL,
      expiredLeaseRetryMs: retryMs > 0 ? retryMs : 1,
      revokeRate: config.revokeRate
    })
    /** completion signals of revokes in flight: whoever finds the lease gone waits for its keys to go */
    const revokeDone = new Map<bigint, Deferred.Deferred<void>>()
    const header = (): ResponseHeader => ({ revision: store.rev() })
    let refusal: () => EtcdError | undefined = () => undefined

    // A backend that cannot write is a broken disk: etcd panics; like the store, we log it and
    // answer "server stopped" rather than acknowledge what the disk does not hold.
    const durable = (e: Effect.Effect<void, BackendError>): Effect.Effect<void, EtcdError> =>
      Effect.catchAll(e, (err) =>
        Effect.zipRight(Effect.logError("lease: backend write failed", err), Effect.fail(Errors.stopped()))
      )

    // --- recovery: records → leases, store keys → attachments, then fresh countdowns ---
    // (only the lessor writes the lease bucket: reading it before attaching misses nothing)
    const records = yield* readLeaseRecords(backend)
    const orphans = yield* store.attachLessor(() => {
      core.recover(records)
      const orphans: Array<{ readonly key: Uint8Array; readonly lease: bigint }> = []
      for (const item of store.keysWithLease()) {
        if (core.exists(item.lease)) core.attach(item.lease, item.key)
        else orphans.push(item)
      }
      const attachments: LeaseAttachments = {
        exists: (id) => core.exists(id),
        attach: (id, key) => core.attach(id, key),
        detach: (id, key) => core.detach(id, key)
      }
      core.promote(now(), Duration.toMillis(config.promoteExtend))
      return { lessor: attachments, value: orphans }
    })
    if (orphans.length > 0) {
      // etcd logs and keeps such keys ("failed to attach a lease"); they then never expire.
      yield* Effect.logWarning("keys attached to leases that do not exist").pipe(
        Effect.annotateLogs({ count: orphans.length, leases: [...new Set(orphans.map((o) => String(o.lease)))] })
      )
    }

    /** Waits for an in-flight revoke of `id`, if any. */
    const awaitRevoke = (id: bigint) =>
      Effect.suspend(() => {
        const done = revokeDone.get(id)
        return done === undefined ? Effect.void : Deferred.await(done)
      })

    /**
     * Revokes a lease: takes it out of the map, deletes its keys in one revision together with its
     * record, and signals completion. Uninterruptible once started, so a revoke is never half done
     * in memory. A lease found already being revoked: waits for that revoke, then "not found".
     */
    const revokeLease = (id: bigint): Effect.Effect<ResponseHeader, EtcdError> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(Deferred.make<void>(), (done) =>
          Effect.suspend(() => {
            const lease = core.beginRevoke(id)
            if (lease === undefined) {
              return restore(awaitRevoke(id)).pipe(Effect.zipRight(Effect.fail(Errors.leaseNotFound())))
            }
            revokeDone.set(id, done)
            return store
              .deleteKeys(lease.sortedKeys(), [{ bucket: "lease", key: leaseIdToBytes(id), value: undefined }])
              .pipe(
                Effect.onExit((exit) =>
                  Effect.sync(() => {
                    core.endRevoke(id, Exit.isSuccess(exit), now())
                    revokeDone.delete(id)
                  }).pipe(Effect.zipRight(Deferred.done(done, Exit.void)))
                ),
                Effect.map((r) => r.header)
              )
          })
        )
      )

    /** A random positive 63-bit id not in use (etcd: reqIDGen.Next() masked to 63 bits). */
    const autoId: Effect.Effect<bigint> = Effect.gen(function* () {
      for (;;) {
        const high = yield* random.nextInt
        const low = yield* random.nextIntBetween(0, 1024)
        const id = composeAutoId(high, low)
        if (id !== NoLease && !core.inUse(id)) return id
      }
    })

    const grantWithId = (id: bigint, ttl: number): Effect.Effect<LeaseGrantResponse, EtcdError> =>
      Effect.suspend(() => {
        // A revoke of this id still deleting keys: its record delete must land before our record.
        if (revokeDone.has(id)) return awaitRevoke(id).pipe(Effect.zipRight(grantWithId(id, ttl)))
        const lease = core.grant(id, ttl, now())
        if (lease === undefined) return Effect.fail(Errors.leaseExist())
        const write = backend.write([leaseRecordOp({ id, ttl: lease.ttl, remainingTTL: 0 })])
        return write.pipe(
          // not durable: forget the lease again unless something already hangs on it
          Effect.tapError(() =>
            Effect.sync(() => {
              if (core.lookup(id) === lease && lease.keys.size === 0) core.forget(id)
            })
          ),
          durable,
          Effect.as({ header: header(), id, ttl: lease.ttl })
        )
      })

    const grant = (req: LeaseGrantRequest): Effect.Effect<LeaseGrantResponse, EtcdError> =>
      Effect.suspend(() => {
        const ttl = Number.isFinite(req.ttl) ? Math.trunc(req.ttl) : MaxLeaseTTL + 1
        if (ttl > MaxLeaseTTL) return Effect.fail(Errors.leaseTTLTooLarge())
        const id = req.id ?? NoLease
        // etcd's Grant answers "not found" for the one id it cannot hold (NoLease); an id that
        // does not fit int64 cannot be held either.
        if (!isInt64(id)) return Effect.fail(Errors.leaseNotFound())
        return id === NoLease ? Effect.flatMap(autoId, (auto) => grantWithId(auto, ttl)) : grantWithId(id, ttl)
      })

    const revoke = (id: bigint): Effect.Effect<LeaseRevokeResponse, EtcdError> =>
      Effect.map(revokeLease(id), (h) => ({ header: h }))

    const renewWith = (hdr: ResponseHeader, id: bigint): Effect.Effect<LeaseKeepAliveResponse, EtcdError> =>
      Effect.suspend(() => {
        const hadCheckpoint = (core.lookup(id)?.remainingTTL ?? 0) > 0
        const r = core.renew(id, now())
        switch (r._tag) {
          case "Renewed": {
            const resp = { header: hdr, id, ttl: r.lease.ttl }
            if (!hadCheckpoint) return Effect.succeed(resp)
            // A recovered checkpoint is spent once renewed (etcd proposes Remaining_TTL 0).
            const write = backend.write([leaseRecordOp({ id, ttl: r.lease.ttl, remainingTTL: 0 })])
            return durable(write).pipe(Effect.as(resp))
          }
          case "NotFound":
            return awaitRevoke(id).pipe(Effect.zipRight(Effect.fail(Errors.leaseNotFound())))
          case "Expired": {
            // etcd waits for the pending revoke and then answers "not found"; we revoke right away,
            // unless revocations are refused (CORRUPT): then the refusal, the lease and its keys stay
            const refused = refusal()
            if (refused !== undefined) return Effect.fail(refused)
            return revokeLease(id).pipe(Effect.zipRight(Effect.fail(Errors.leaseNotFound())))
          }
        }
      })

    const renew = (id: bigint) => Effect.suspend(() => renewWith(header(), id))

    const keepAlive = (id: bigint): Effect.Effect<LeaseKeepAliveResponse, EtcdError> =>
      Effect.suspend(() => {
        // The header is taken before the renew, as etcd's stream does: a keep-alive answered at
        // revision r never hides a revoke at a revision <= r.
        const hdr = header()
        return renewWith(hdr, id).pipe(
          Effect.catchIf(isLeaseNotFound, () => Effect.succeed({ header: hdr, id, ttl: 0 }))
        )
      })

    const timeToLive = (req: LeaseTimeToLiveRequest): Effect.Effect<LeaseTimeToLiveResponse> =>
      Effect.sync(() => {
        const hdr = header()
        const lease = core.lookup(req.id)
        if (lease === undefined) return { header: hdr, id: req.id, ttl: -1, grantedTTL: 0, keys: [] }
        // etcd truncates the remaining duration to whole seconds; a lease past expiry but not yet
        // revoked reads 0 rather than a negative count.
        const ttl = Math.max(0, Math.trunc(lease.remainingMs(now()) / 1000))
        return {
          header: hdr,
          id: req.id,
          ttl,
          grantedTTL: lease.ttl,
          keys: req.keys === true ? lease.sortedKeys() : []
        }
      })

    const leases: Effect.Effect<LeaseLeasesResponse> = Effect.sync(() => ({
      header: header(),
      leases: core.byExpiry().map((l) => ({ id: l.id }))
    }))

    // --- the expiry fiber (etcd's runLoop + revokeExpiredLeases) ---
    const revokeLimit = Math.max(1, Math.floor(config.revokeRate / 2))
    // etcd's revokeExpiredLeases proposes a LeaseRevoke per lease; a refused one ("failed to revoke
    // lease") leaves the lease expired, handed out again after the retry interval (findExpired).
    const revokeExpiredLease = (id: bigint): Effect.Effect<ResponseHeader | undefined, EtcdError> => {
      const refused = refusal()
      return refused === undefined ? revokeLease(id) : Effect.fail(refused)
    }
    const revokeExpired = Effect.suspend(() =>
      Effect.forEach(
        core.findExpired(now(), revokeLimit),
        (lease) =>
          revokeExpiredLease(lease.id).pipe(
            // revoked meanwhile by a client: nothing left to do
            Effect.catchIf(isLeaseNotFound, () => Effect.void),
            Effect.catchAllCause((cause) =>
              Effect.logWarning("failed to revoke an expired lease; retrying later", cause).pipe(
                Effect.annotateLogs({ lease: String(lease.id) })
              )
            )
          ),
        { discard: true }
      )
    )
    // supervised: without it leases would never expire (the member fails instead)
    yield* revokeExpired.pipe(
      Effect.zipRight(Effect.sleep(config.expiryCheckInterval)),
      Effect.forever,
      (loop) => supervised("lease expiry loop", loop),
      Effect.forkScoped
    )

    return Lessor.of({
      minLeaseTTL: config.minLeaseTTL,
      grant,
      revoke,
      renew,
      keepAlive,
      timeToLive,
      leases,
      guardRevocations: (f) => {
        refusal = f
      }
    })
  })

/** The lessor with `config` over etcd's defaults, over a store and its backend. */
export const layerWith = (
  config: Partial<LessorConfig> = {}
): Layer.Layer<Lessor, RecoveryError, MvccStore | Backend> =>
  Layer.scoped(Lessor, make({ ...defaultLessorConfig, ...config }))

/** The lessor with etcd's defaults (`defaultLessorConfig`) over a store and its backend. */
export const layer: Layer.Layer<Lessor, RecoveryError, MvccStore | Backend> = layerWith()
