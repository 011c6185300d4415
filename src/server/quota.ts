/**
 * The space quota (--quota-backend-bytes), as etcd 3.4's quotaKVServer/quotaLeaseServer and
 * applierV3Capped: Put, Txn and LeaseGrant are checked before they run.
 *
 * - While the NOSPACE alarm is up, a Put, a Txn whose branches put anything, and a LeaseGrant are
 *   refused ("etcdserver: mvcc: database space exceeded", ResourceExhausted); reads, deletes,
 *   compaction and lease revokes go on.
 * - Otherwise the request is refused when the backend's size plus the request's cost is not
 *   below the quota, and the NOSPACE alarm is raised (and persisted) for this member.
 * - Costs are etcd's estimates: a put 256 + key + value bytes, a txn its costlier branch (top-level
 *   puts only, as 3.4), a lease grant 64.
 *
 * The size is the backend's bytes in use, not its file size: LMDB reuses freed pages by itself
 * and never shrinks its file, so after a compaction the space is available again without a
 * defragment (docs/decisions.md, "Space quota").
 */
import { Effect } from "effect"
import type { BackendShape } from "../backend/backend.js"
import { EtcdError, Errors, GrpcCode } from "../errors.js"
import { type Alarms, AlarmType } from "./alarms.js"

const KV_OVERHEAD = 256
const LEASE_OVERHEAD = 64

interface PutLike {
  readonly key?: Uint8Array | null
  readonly value?: Uint8Array | null
}
type OpLike = { readonly request?: string | undefined } & Partial<Record<"request_put", PutLike | null>>
interface TxnLike {
  readonly success?: ReadonlyArray<OpLike> | null
  readonly failure?: ReadonlyArray<OpLike> | null
}

export const costPut = (r: PutLike): number => KV_OVERHEAD + (r.key?.length ?? 0) + (r.value?.length ?? 0)

const costBranch = (ops: ReadonlyArray<OpLike> | null | undefined): number => {
  let n = 0
  if (ops != null) {
    for (const op of ops) {
      const put = op.request === "request_put" ? op.request_put : undefined
      if (put != null) n += costPut(put)
    }
  }
  return n
}

export const costTxn = (r: TxnLike): number => Math.max(costBranch(r.success), costBranch(r.failure))

export const costLeaseGrant = LEASE_OVERHEAD

export interface Quota {
  /** Checks a write of `cost` bytes: fails with NOSPACE (raising the alarm) when it does not fit. */
  readonly check: (cost: number) => Effect.Effect<void, EtcdError>
  /**
   * Whether `check(cost)` would pass at once, with nothing to run: the write fast path
   * (kv-server.ts) goes on without an Effect then, and takes `check` otherwise (refusal, alarm).
   */
  readonly passes: (cost: number) => boolean
}

export const makeQuota = (backend: BackendShape, alarms: Alarms, quotaBytes: number, memberId: bigint): Quota => {
  const memberID = memberId.toString()
  const refuse = Effect.fail(Errors.noSpace())
  const passes = (cost: number): boolean =>
    !(alarms.noSpace() && cost > 0) && backend.sizeInUseBytes() + cost < quotaBytes
  return {
    passes,
    check: (cost) => {
      // applierV3Capped: a costless request (a read-only txn) still passes the interceptor below
      if (alarms.noSpace() && cost > 0) return refuse
      if (backend.sizeInUseBytes() + cost < quotaBytes) return Effect.void
      return alarms.activate(memberID, AlarmType.NOSPACE).pipe(
        Effect.tap((raised) =>
          raised === undefined ? Effect.void : Effect.logWarning("alarm raised: NOSPACE (database space exceeded)")
        ),
        Effect.mapError((e) => new EtcdError({ code: GrpcCode.Unavailable, message: `etcdserver: ${e.message}` })),
        Effect.zipRight(refuse)
      )
    }
  }
}
