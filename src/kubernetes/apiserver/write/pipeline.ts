/**
 * The write path as one explicit pipeline (the apiserver's handlers + generic registry Store):
 *
 *   decode (by content type, decode.ts) → defaulting → admission → prepare → validation → persist
 *
 * Each stage is a list of `ObjectStage`s run in order over the object being written (and, on
 * update, the stored one); `persist.ts` is the last step, which under `dryRun=All` runs
 * everything a write runs and writes nothing. The verb logic that strings them together (create,
 * update, delete with finalizers, deletecollection) is store.ts; namespaces' own delete is
 * namespace-delete.ts. New behaviour comes as stages: a CRD's structural defaulting and pruning
 * in `defaulting`, its schema validation in `validation`, managedFields in `admission`.
 */
import type { KindStrategy } from "../kinds/strategy.js"
import type { ResourceRegistry } from "../registry.js"
import type { ResourceInfo } from "../resources.js"
import { namespaceLifecycleStage } from "./admission.js"
import { kindDefaults } from "./defaulting.js"
import { kindValidation } from "./validation.js"
import type { NamespaceLifecycle } from "./namespace-lifecycle.js"
import type { ObjectStage, WriteContext } from "./stage.js"
import { Warnings as WarningsImpl } from "./warnings.js"

export type { ObjectStage, Operation, WriteContext } from "./stage.js"

export interface WritePipeline {
  /** after decoding: the kind's defaults (SetDefaults_*, conversion side effects) */
  readonly defaulting: ReadonlyArray<ObjectStage>
  /** mutating admission: NamespaceLifecycle */
  readonly admission: ReadonlyArray<ObjectStage>
  /** the kind's validation (ValidateObjectMeta and the kind's rules): 422 */
  readonly validation: ReadonlyArray<ObjectStage>
}

export const defaultPipeline: WritePipeline = {
  defaulting: [kindDefaults],
  admission: [namespaceLifecycleStage],
  validation: [kindValidation]
}

/** A write by the server itself (a controller): no dry run, the warnings dropped. */
export const internalContext = (
  registry: ResourceRegistry,
  lifecycle: NamespaceLifecycle,
  info: ResourceInfo,
  namespace: string | undefined,
  strategy: KindStrategy = info.strategy
): WriteContext | undefined => {
  const served = registry.byGroupResource(info.group, info.plural)
  if (served === undefined) return undefined
  return {
    info: served.info,
    strategy,
    storage: served.storage,
    registry,
    lifecycle,
    namespace,
    dryRun: false,
    warnings: new WarningsImpl()
  }
}

/** The pipeline of a resource (issue 27 adds a CRD's schema stages for custom resources here). */
export const pipelineFor = (_info: ResourceInfo): WritePipeline => defaultPipeline
