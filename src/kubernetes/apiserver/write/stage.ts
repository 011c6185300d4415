/**
 * What the stages of the write pipeline (pipeline.ts) share: the write's context and the shape of
 * one stage. Apart from pipeline.ts so that the stages (defaulting.ts, admission.ts,
 * validation.ts) and the pipeline that lists them do not import each other.
 */
import type { Effect } from "effect"
import type { KubeObject } from "../../api/object-meta.js"
import type { StatusError } from "../../api/status.js"
import type { StorageShape } from "../../storage/interfaces.js"
import type { KindStrategy, Obj } from "../kinds/strategy.js"
import type { ResourceRegistry } from "../registry.js"
import type { ResourceInfo } from "../resources.js"
import type { NamespaceLifecycle } from "./namespace-lifecycle.js"
import type { Warnings } from "./warnings.js"

export type Operation = "CREATE" | "UPDATE" | "DELETE"

/** What every stage of one write knows. */
export interface WriteContext {
  readonly info: ResourceInfo
  /** the strategy in effect (a subresource's, e.g. namespaces/finalize) */
  readonly strategy: KindStrategy
  readonly storage: StorageShape
  readonly registry: ResourceRegistry
  readonly lifecycle: NamespaceLifecycle
  /** the request's namespace (undefined for cluster-scoped resources) */
  readonly namespace: string | undefined
  readonly dryRun: boolean
  readonly warnings: Warnings
  /**
   * the request's group/version: a CRD's objects are seen in it (None conversion: the apiVersion
   * rewritten) and stored in the storage version
   */
  readonly apiVersion?: string | undefined
}

/** One step over the object being written; `old` is the stored object on update and delete. */
export type ObjectStage = (
  ctx: WriteContext,
  op: Operation,
  obj: Obj,
  old: KubeObject | undefined
) => Effect.Effect<void, StatusError>
