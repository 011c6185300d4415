/**
 * pkg/registry/core/namespace/storage's REST.Delete: the first DELETE of a namespace only marks
 * it — deletionTimestamp now, phase Terminating, orphan/foregroundDeletion in metadata.finalizers
 * as the options say — and answers with it; the namespace controller then removes what is in it
 * and takes `kubernetes` off spec.finalizers (namespaces/{name}/finalize), and the namespace goes
 * with the last finalizer. A DELETE while spec.finalizers is not empty answers with the namespace
 * unchanged. A uid precondition is always added.
 */
import { Effect } from "effect"
import { newConflict, type StatusError } from "../../api/status.js"
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from "../kinds/object-meta.js"
import { specFinalizers } from "../kinds/namespace.js"
import type { Obj } from "../kinds/strategy.js"
import { keyOf } from "../resources.js"
import { timestamp } from "./defaulting.js"
import type { DeleteOptions } from "./options.js"
import { persist } from "./persist.js"
import type { WriteContext } from "./pipeline.js"
import { type DeleteResult, deleteObject, deletionValidator } from "./store.js"

const gr = { group: "", resource: "namespaces" }

const shouldHave = (o: DeleteOptions, finalizer: string, has: boolean): boolean => {
  if (o.orphanDependents !== undefined) return finalizer === FINALIZER_ORPHAN ? o.orphanDependents : !o.orphanDependents
  if (o.propagationPolicy !== undefined)
    return o.propagationPolicy === (finalizer === FINALIZER_ORPHAN ? "Orphan" : "Foreground")
  return has
}

export const deleteNamespace = (
  ctx: WriteContext,
  name: string,
  o: DeleteOptions
): Effect.Effect<DeleteResult, StatusError> =>
  Effect.gen(function* () {
    const key = keyOf(ctx.info, undefined, name)
    const ns = (yield* ctx.storage.get(key))!
    const uid = o.preconditions?.uid ?? ns.metadata.uid
    if (uid !== ns.metadata.uid)
      return yield* Effect.fail(
        newConflict(
          gr,
          name,
          `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${ns.metadata.uid ?? ""}`
        )
      )
    const rv = o.preconditions?.resourceVersion
    if (rv !== undefined && rv !== ns.metadata.resourceVersion)
      return yield* Effect.fail(
        newConflict(
          gr,
          name,
          `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${ns.metadata.resourceVersion ?? ""}`
        )
      )
    const preconditions = { uid, resourceVersion: rv }
    if ((ns.metadata.deletionTimestamp ?? "") === "") {
      const validateDeletion = deletionValidator(ctx)
      const out = yield* persist(ctx).update(key, {
        preconditions,
        tryUpdate: (existing) =>
          Effect.gen(function* () {
            yield* validateDeletion(existing)
            const next = structuredClone(existing) as Obj
            if ((next.metadata.deletionTimestamp ?? "") === "") next.metadata.deletionTimestamp = timestamp()
            next["status"] = { ...((next["status"] as object | undefined) ?? {}), phase: "Terminating" }
            const fins = [...(next.metadata.finalizers ?? [])]
            let changed = false
            for (const f of [FINALIZER_ORPHAN, FINALIZER_FOREGROUND]) {
              const has = fins.includes(f)
              const want = shouldHave(o, f, has)
              if (want === has) continue
              changed = true
              if (want) fins.push(f)
              else fins.splice(fins.indexOf(f), 1)
            }
            if (changed) next.metadata.finalizers = fins
            return { object: next }
          })
      })
      return { object: out, deleted: false }
    }
    if (specFinalizers(ns).length > 0) return { object: ns, deleted: false }
    return yield* deleteObject(ctx, name, { ...o, preconditions })
  })
