/**
 * pkg/controller/namespace (the namespace controller of kube-controller-manager), in the
 * apiserver's process: it follows the namespaces (list, then watch), and `namespaceDeletionDelay`
 * (5 s, namespaceDeletionGracePeriod) after a terminating namespace changed it removes what is in
 * it — a deletecollection per served namespaced resource with propagationPolicy=Background, so
 * objects with finalizers are only marked — and writes the deletion conditions. While objects
 * remain it looks again after estimate/2+1 s (15 s per object with finalizers); when nothing
 * remains it takes `kubernetes` off spec.finalizers (the /finalize update), which removes the
 * namespace once no finalizer is left. Supervised fibers in the caller's scope: the informer
 * relists after its watch ends, the worker retries a failed pass with a growing delay.
 */
import { Duration, Effect, FiberSet, Queue, type Scope, Stream } from "effect"
import { supervised } from "../../../supervision/fatal.js"
import type { KubeObject } from "../../api/object-meta.js"
import { InternalError } from "../../api/status.js"
import { Everything } from "../../storage/selection-predicate.js"
import {
  FINALIZER_KUBERNETES,
  namespaceFinalizeStrategy,
  namespaceStatusStrategy,
  specFinalizers,
  statusOf
} from "../kinds/namespace.js"
import type { Obj } from "../kinds/strategy.js"
import type { ResourceRegistry } from "../registry.js"
import { keyOf, namespaces } from "../resources.js"
import type { NamespaceLifecycle } from "../write/admission.js"
import { internalContext } from "../write/pipeline.js"
import { deleteCollection, deleteObject, update } from "../write/store.js"
import { type DeletionTotals, updatedConditions } from "./namespace-conditions.js"

export interface NamespaceControllerDeps {
  readonly registry: ResourceRegistry
  readonly lifecycle: NamespaceLifecycle
  /** namespaceDeletionGracePeriod: how long after a change a terminating namespace is looked at (default 5 s) */
  readonly delay?: Duration.DurationInput | undefined
}

/** finalizerEstimateSeconds: what an object with finalizers adds to the estimate */
export const FINALIZER_ESTIMATE_SECONDS = 15

type Outcome = { readonly _tag: "Done" } | { readonly _tag: "Requeue"; readonly after: Duration.Duration }

const done: Outcome = { _tag: "Done" }

const isDeleting = (o: KubeObject) => (o.metadata.deletionTimestamp ?? "") !== ""

/** One pass of deleteAllContent: each namespaced resource emptied, what remains counted. */
const deleteAllContent = (deps: NamespaceControllerDeps, namespace: string) =>
  Effect.gen(function* () {
    const errors: Array<string> = []
    const remaining = new Map<string, number>()
    const finalizers = new Map<string, number>()
    let estimate = 0
    for (const r of deps.registry.all().filter((x) => x.info.namespaced)) {
      const ctx = internalContext(deps.registry, deps.lifecycle, r.info, namespace)
      if (ctx === undefined) continue
      const key = keyOf(r.info, namespace)
      const predicate = { ...Everything, getAttrs: r.info.getAttrs }
      const deleted = yield* Effect.either(
        deleteCollection(ctx, key, predicate, "", (item) =>
          deleteObject(ctx, item.metadata.name!, { dryRun: false, propagationPolicy: "Background" })
        )
      )
      if (deleted._tag === "Left") errors.push(deleted.left.message)
      const left = yield* Effect.either(r.storage.getList(key, { recursive: true }))
      if (left._tag === "Left") {
        errors.push(left.left.message)
        continue
      }
      if (left.right.items.length === 0) continue
      remaining.set(`${r.info.plural}.${r.info.group}`, left.right.items.length)
      for (const item of left.right.items) {
        const fins = item.metadata.finalizers ?? []
        if (fins.length === 0) {
          errors.push(
            `unexpected items still remain in namespace: ${namespace} for gvr: ${r.info.group}/${r.info.storageVersion}, Resource=${r.info.plural}`
          )
          continue
        }
        estimate = Math.max(estimate, FINALIZER_ESTIMATE_SECONDS)
        for (const f of fins) finalizers.set(f, (finalizers.get(f) ?? 0) + 1)
      }
    }
    const totals: DeletionTotals = { deleteErrors: errors, remaining, finalizers }
    return { totals, estimate }
  })

/** namespaces/{name}/status or /finalize: an update of the stored namespace by `change`. */
const updateNamespace = (
  deps: NamespaceControllerDeps,
  name: string,
  strategy: typeof namespaceStatusStrategy,
  change: (ns: Obj) => void
) =>
  Effect.gen(function* () {
    const ctx = internalContext(deps.registry, deps.lifecycle, namespaces, undefined, strategy)
    if (ctx === undefined) return
    yield* update(ctx, name, (current) =>
      Effect.sync(() => {
        const next = structuredClone(current) as Obj
        change(next)
        return next
      })
    )
  })

/** namespaced_resources_deleter.go's Delete: one pass over one namespace. */
export const syncNamespace = (deps: NamespaceControllerDeps, name: string) =>
  Effect.gen(function* () {
    const nsStore = deps.registry.byGroupResource("", "namespaces")
    if (nsStore === undefined) return done
    const ns = yield* nsStore.storage.get(keyOf(namespaces, undefined, name), { ignoreNotFound: true })
    if (ns === undefined || !isDeleting(ns)) return done
    if (statusOf(ns).phase !== "Terminating") {
      yield* updateNamespace(deps, name, namespaceStatusStrategy, (n) => {
        n["status"] = { ...statusOf(n), phase: "Terminating" }
      })
    }
    if (!specFinalizers(ns).includes(FINALIZER_KUBERNETES)) return done
    const { totals, estimate } = yield* deleteAllContent(deps, name)
    yield* updateNamespace(deps, name, namespaceStatusStrategy, (n) => {
      const status = statusOf(n)
      n["status"] = { ...status, phase: "Terminating", conditions: updatedConditions(status.conditions ?? [], totals) }
    })
    if (totals.deleteErrors.length > 0) {
      const msgs = [...totals.deleteErrors].sort()
      return yield* Effect.fail(
        new InternalError({
          message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(", ")}`
        })
      )
    }
    if (estimate > 0) {
      yield* Effect.logDebug(
        `namespace ${name}: some content remains, estimate ${estimate} seconds before it is removed`
      )
      return { _tag: "Requeue", after: Duration.seconds(Math.floor(estimate / 2) + 1) } as Outcome
    }
    // finalizeNamespace: our finalizer off; the last finalizer's removal removes the namespace
    yield* updateNamespace(deps, name, namespaceFinalizeStrategy, (n) => {
      n["spec"] = {
        ...((n["spec"] as object | undefined) ?? {}),
        finalizers: specFinalizers(n).filter((f) => f !== FINALIZER_KUBERNETES)
      }
    })
    return done
  }).pipe(Effect.catchTag("NotFound", () => Effect.succeed(done)))

/**
 * The controller: an informer over the namespaces and one worker, in the caller's scope.
 * `synced` tells when the first list was taken.
 */
export const runNamespaceController = (deps: NamespaceControllerDeps): Effect.Effect<never, never, Scope.Scope> =>
  Effect.gen(function* () {
    const delay = Duration.decode(deps.delay ?? Duration.seconds(5))
    const queue = yield* Queue.unbounded<string>()
    const timers = yield* FiberSet.make()
    const scheduled = new Set<string>()
    const failures = new Map<string, number>()
    const enqueueAfter = (name: string, after: Duration.Duration) =>
      Effect.suspend(() => {
        if (scheduled.has(name)) return Effect.void
        scheduled.add(name)
        return FiberSet.run(
          timers,
          Effect.sleep(after).pipe(
            Effect.zipRight(Effect.sync(() => scheduled.delete(name))),
            Effect.zipRight(Queue.offer(queue, name))
          )
        ).pipe(Effect.asVoid)
      })
    const nsKey = keyOf(namespaces, undefined)
    const informer = Effect.gen(function* () {
      const nsStore = deps.registry.byGroupResource("", "namespaces")
      if (nsStore === undefined) return
      const list = yield* nsStore.storage.getList(nsKey, { recursive: true })
      for (const ns of list.items) if (isDeleting(ns)) yield* enqueueAfter(ns.metadata.name!, delay)
      const events = yield* nsStore.storage.watch(nsKey, {
        recursive: true,
        resourceVersion: list.metadata.resourceVersion ?? "0"
      })
      yield* Stream.runForEach(events, (e) =>
        (e.type === "ADDED" || e.type === "MODIFIED") && isDeleting(e.object)
          ? enqueueAfter(e.object.metadata.name!, delay)
          : Effect.void
      )
    })
    // each loop retries what fails; a defect ends it, and is reported (failOnFatal fails the program)
    yield* Effect.forkScoped(
      supervised(
        "namespace controller's informer",
        informer.pipe(
          Effect.catchAll((e) => Effect.logWarning(`namespace controller: ${e.message}`)),
          Effect.zipRight(Effect.sleep(Duration.seconds(1))),
          Effect.forever
        )
      )
    )
    const worker = Effect.gen(function* () {
      const name = yield* Queue.take(queue)
      const r = yield* Effect.either(syncNamespace(deps, name))
      if (r._tag === "Right") {
        failures.delete(name)
        if (r.right._tag === "Requeue") yield* enqueueAfter(name, r.right.after)
        return
      }
      // the rate limiter's exponential retry (capped)
      const n = (failures.get(name) ?? 0) + 1
      failures.set(name, n)
      yield* Effect.logWarning(`namespace controller: deletion of namespace ${name} failed: ${r.left.message}`)
      yield* enqueueAfter(name, Duration.millis(Math.min(1000 * 2 ** (n - 1), 60_000)))
    })
    yield* Effect.forkScoped(supervised("namespace controller's worker", Effect.forever(worker)))
    return yield* Effect.never
  })
