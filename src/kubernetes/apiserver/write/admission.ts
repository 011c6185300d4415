/**
 * Admission: the NamespaceLifecycle plugin (apiserver/pkg/admission/plugin/namespace/lifecycle).
 * Creating in a namespace that does not exist is its 404; in one that is terminating its 403
 * `unable to create new content in namespace <ns> because it is being terminated` (with the
 * NamespaceTerminating cause); `default`, `kube-system` and `kube-public` may not be deleted.
 * Updates and deletes of namespaced objects are never blocked. Namespaces read from the watch
 * cache first; one deleted in the last 30 s is read live, as the plugin's forceLiveLookup cache.
 */
import { Effect } from "effect"
import type { KubeObject } from "../../api/object-meta.js"
import { newForbidden, newNotFound, type StatusError } from "../../api/status.js"
import { phaseOf } from "../kinds/namespace.js"
import { keyOf, namespaces } from "../resources.js"
import type { ObjectStage, WriteContext } from "./stage.js"

export { NamespaceLifecycle } from "./namespace-lifecycle.js"

/** the namespaces that may never be deleted (the plugin's immortalNamespaces) */
export const IMMORTAL_NAMESPACES: ReadonlyArray<string> = ["default", "kube-system", "kube-public"]

const isNamespaceKind = (ctx: WriteContext) => ctx.info.group === "" && ctx.info.plural === "namespaces"

/** The namespace a create goes into: from the cache, else (or when recently deleted) from etcd. */
const lookupNamespace = (ctx: WriteContext, name: string): Effect.Effect<KubeObject | undefined, StatusError> => {
  const ns = ctx.registry.byGroupResource("", "namespaces")
  if (ns === undefined) return Effect.succeed({ metadata: { name } })
  const key = keyOf(namespaces, undefined, name)
  return Effect.gen(function* () {
    const cached = yield* ns.storage.get(key, { resourceVersion: "0", ignoreNotFound: true })
    const live = cached === undefined || (phaseOf(cached) === "Active" && ctx.lifecycle.liveLookup(name))
    return live ? yield* ns.storage.get(key, { ignoreNotFound: true }) : cached
  })
}

/** The object's name for messages: its name, its generateName, or "Unknown" (extractResourceName). */
const nameFor = (obj: KubeObject): string => {
  const m = obj.metadata
  if ((m.name ?? "") !== "") return m.name!
  if ((m.generateName ?? "") !== "") return m.generateName!
  return "Unknown"
}

export const namespaceLifecycleStage: ObjectStage = (ctx, op, obj, old) =>
  Effect.suspend(() => {
    if (isNamespaceKind(ctx)) {
      if (op !== "DELETE") return Effect.void
      const name = old?.metadata.name ?? obj.metadata.name ?? ""
      if (IMMORTAL_NAMESPACES.includes(name)) {
        return Effect.fail(
          newForbidden({ group: "", resource: "namespaces" }, name, "this namespace may not be deleted")
        )
      }
      ctx.lifecycle.markDeleted(name)
      return Effect.void
    }
    if (op !== "CREATE" || !ctx.info.namespaced || ctx.namespace === undefined) return Effect.void
    const namespace = ctx.namespace
    return Effect.flatMap(lookupNamespace(ctx, namespace), (ns): Effect.Effect<void, StatusError> => {
      if (ns === undefined) return Effect.fail(newNotFound({ group: "", resource: "namespaces" }, namespace))
      if (phaseOf(ns) !== "Terminating") return Effect.void
      return Effect.fail(
        newForbidden(
          { group: ctx.info.group, resource: ctx.info.plural },
          nameFor(obj),
          `unable to create new content in namespace ${namespace} because it is being terminated`,
          [
            {
              reason: "NamespaceTerminating",
              message: `namespace ${namespace} is being terminated`,
              field: "metadata.namespace"
            }
          ]
        )
      )
    })
  })
