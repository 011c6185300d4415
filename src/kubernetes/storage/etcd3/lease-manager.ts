/**
 * etcd3/lease_manager.go: objects created with a TTL share leases. A lease is reused while it
 * still outlives the new TTL and was not granted more than a reuse window (5% of the TTL, at most
 * 60 s) beyond it, for at most 1000 objects; a fresh lease gets that window added to its TTL.
 */
import { Effect } from "effect"
import type { EtcdClientShape } from "../../../client/client.js"
import type { StatusError } from "../../api/status.js"
import { fromEtcd } from "./errors.js"

export interface LeaseManagerConfig {
  readonly reuseDurationSeconds: number
  readonly maxObjectCount: number
}

export const defaultLeaseManagerConfig: LeaseManagerConfig = { reuseDurationSeconds: 60, maxObjectCount: 1000 }

const REUSE_PERCENT = 0.05

export interface LeaseManager {
  readonly getLease: (ttlSeconds: number) => Effect.Effect<bigint, StatusError>
}

export const makeLeaseManager = (client: EtcdClientShape, config = defaultLeaseManagerConfig): LeaseManager => {
  let prevLeaseId = 0n
  let prevExpiry = 0
  let attached = 0
  const lock = Effect.unsafeMakeSemaphore(1)
  const reuseSeconds = (ttl: number) => Math.min(Math.trunc(REUSE_PERCENT * ttl), config.reuseDurationSeconds)
  return {
    getLease: (ttl) =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          const now = Date.now()
          const reuse = reuseSeconds(ttl)
          const valid = now + ttl * 1000 < prevExpiry
          const sufficient = now + (ttl + reuse) * 1000 > prevExpiry
          attached++
          if (valid && sufficient && attached <= config.maxObjectCount) return Effect.succeed(prevLeaseId)
          const granted = ttl + reuse
          return Effect.map(Effect.mapError(client.lease.grant(granted), fromEtcd), (r) => {
            prevLeaseId = r.id
            prevExpiry = now + granted * 1000
            attached = 1
            return r.id
          })
        })
      )
  }
}
