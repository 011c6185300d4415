/**
 * pkg/controlplane/controller/systemnamespaces: the namespaces the cluster needs (default,
 * kube-system, kube-public, kube-node-lease) are created at start and then every minute when
 * missing — one deleted (kube-node-lease may be) comes back once it is gone.
 */
import { Duration, Effect, Schedule, type Scope } from "effect"
import { supervised } from "../../../supervision/fatal.js"
import type { StatusError } from "../../api/status.js"
import type { Obj } from "../kinds/strategy.js"
import type { ResourceRegistry } from "../registry.js"
import { namespaces } from "../resources.js"
import type { NamespaceLifecycle } from "../write/admission.js"
import { internalContext } from "../write/pipeline.js"
import { create, defaulted } from "../write/store.js"

export const SYSTEM_NAMESPACES: ReadonlyArray<string> = ["kube-system", "kube-public", "kube-node-lease", "default"]

/** One pass: each missing system namespace created (one that exists, even terminating, is left alone). */
export const ensureSystemNamespaces = (
  registry: ResourceRegistry,
  lifecycle: NamespaceLifecycle
): Effect.Effect<void, StatusError> =>
  Effect.forEach(
    SYSTEM_NAMESPACES,
    (name) =>
      Effect.suspend(() => {
        const ctx = internalContext(registry, lifecycle, namespaces, undefined)
        if (ctx === undefined) return Effect.void
        const obj = { apiVersion: "v1", kind: "Namespace", metadata: { name } } as Obj
        return Effect.flatMap(defaulted(ctx, "CREATE", obj), (o) => create(ctx, o)).pipe(
          Effect.catchTag("AlreadyExists", () => Effect.void),
          Effect.asVoid
        )
      }),
    { discard: true }
  )

/** The controller's loop, every minute, in the caller's scope. */
export const runSystemNamespacesController = (
  registry: ResourceRegistry,
  lifecycle: NamespaceLifecycle,
  every: Duration.DurationInput = Duration.minutes(1),
  onPass: () => void = () => {}
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(
    Effect.forkScoped(
      supervised(
        "system namespaces controller",
        ensureSystemNamespaces(registry, lifecycle).pipe(
          Effect.catchAll((e) => Effect.logWarning(`system namespaces: ${e.message}`)),
          Effect.zipRight(Effect.sync(onPass)),
          Effect.repeat(Schedule.spaced(every))
        )
      )
    )
  )
