/**
 * What the lessor (src/lease) asks of the store: plugging itself in, the live keys with a lease to
 * rebuild its attachments from, and deleting a revoked lease's keys in one revision (etcd's
 * lessor calls the store's RangeDeleter, a write txn, for the same).
 */
import { Effect, type Scope } from "effect"
import type { WriteOp } from "../backend/backend.js"
import type { EtcdError } from "../errors.js"
import { keyString } from "./key-string.js"
import type { DeleteRangeResponse, LeaseAttachments } from "./kv.js"
import type { KvStore } from "./kvstore-state.js"
import { write } from "./kvstore-write.js"

/** Deletes these keys in ONE revision (sorted key order, absent ones skipped), `extra` in the same batch. */
export const deleteKeys = (
  s: KvStore,
  keys: ReadonlyArray<Uint8Array>,
  extra?: ReadonlyArray<WriteOp>
): Effect.Effect<DeleteRangeResponse, EtcdError> =>
  write(
    s,
    (txn) => {
      const ks = Array.from(new Set(keys.map(keyString))).sort()
      const rev = txn.beginRev
      let deleted = 0
      for (const k of ks) {
        const ki = s.index.keyIndex(k)
        if (ki !== undefined && ki.revisionAt(rev + 1) !== undefined) {
          txn.delete(ki)
          deleted++
        }
      }
      return { header: { revision: deleted > 0 ? rev + 1 : rev }, deleted, prevKvs: [] }
    },
    extra
  )

/** Every live key with a non-zero lease. */
export const keysWithLease = (s: KvStore): ReadonlyArray<{ readonly key: Uint8Array; readonly lease: bigint }> => {
  const out: Array<{ key: Uint8Array; lease: bigint }> = []
  for (const [k, lease] of s.leases) {
    const ki = s.index.keyIndex(k)
    if (ki !== undefined) out.push({ key: ki.key, lease })
  }
  return out
}

/** Plugs the lessor `setup` makes in for the life of the current scope; a second one is a defect. */
export const attachLessor = <A>(
  s: KvStore,
  setup: () => { readonly lessor: LeaseAttachments; readonly value: A }
): Effect.Effect<A, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.suspend(() => {
        if (s.lessor !== undefined) return Effect.dieMessage("mvcc: a lessor is already attached to this store")
        const r = setup()
        s.lessor = r.lessor
        return Effect.succeed(r)
      }),
      (r) =>
        Effect.sync(() => {
          if (s.lessor === r.lessor) s.lessor = undefined
        })
    ),
    (r) => r.value
  )
