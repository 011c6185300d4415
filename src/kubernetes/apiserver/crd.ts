/**
 * apiextensions-apiserver: CustomResourceDefinitions. A CRD is validated and gets its status on
 * every write (kinds/crd.ts), and the CRD controller — the crdHandler's informer —
 * serves its resource from the moment the CRD is stored: it lists the CRDs at start (they live in
 * etcd, so they come back after a restart) and then follows their watch, adding, updating and
 * removing resources in the registry. Deleting a CRD stops serving it and deletes its objects
 * (the customresourcecleanup finalizer's work, done at once). `synced` completes once the CRDs
 * stored at start are served (the server listens only then).
 */
import { Deferred, Duration, Effect, Either, Schedule, Stream } from "effect"
import type { EtcdClientShape } from "../../client/client.js"
import { supervised } from "../../supervision/fatal.js"
import type { KubeObject } from "../api/object-meta.js"
import { fieldLabelNotSupported } from "../api/fields.js"
import { isDNS1123Subdomain } from "../api/validation.js"
import type { StorageShape } from "../storage/interfaces.js"
import { type Attrs, defaultAttrs } from "../storage/selection-predicate.js"
import type { ResourceRegistry } from "./registry.js"
import { acceptedNames, validateServable } from "./kinds/crd.js"
import { type CustomVersion, customResourceStatusStrategy, customResourceStrategy } from "./kinds/custom.js"
import {
  apiVersionOf,
  customResourceDefinitions,
  CUSTOM_RESOURCE_VERBS,
  type PrinterColumn,
  type ResourceInfo,
  resourcePrefixOf,
  type VersionStrategies
} from "./resources.js"
import { applyDefaults, hasDefaults } from "./schema/defaulting.js"
import { pruneResource } from "./schema/pruning.js"
import { type CrdSpec, crdSpecOf, type CrdVersion, versionSchema } from "./schema/json-schema.js"

const AGE_DATE: PrinterColumn = {
  name: "Age",
  type: "date",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  jsonPath: ".metadata.creationTimestamp"
}

/** getColumnsForVersion: a version's additionalPrinterColumns, or AGE */
const columnsOf = (columns: CrdVersion["additionalPrinterColumns"]): ReadonlyArray<PrinterColumn> =>
  columns === undefined || columns.length === 0
    ? [AGE_DATE]
    : columns.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format,
        description: c.description,
        priority: c.priority,
        jsonPath: c.jsonPath
      }))

const crAttrs =
  (namespaced: boolean) =>
  (obj: KubeObject): Attrs => {
    if (namespaced) return defaultAttrs(obj)
    return { labels: obj.metadata.labels ?? {}, fields: { "metadata.name": obj.metadata.name ?? "" } }
  }

const customVersion = (spec: CrdSpec, v: CrdVersion, kind: string): CustomVersion => ({
  group: spec.group ?? "",
  version: v.name,
  kind,
  namespaced: spec.scope === "Namespaced",
  schema: versionSchema(v),
  preserveUnknownFields: spec.preserveUnknownFields === true,
  statusSubresource: v.subresources?.status !== undefined,
  scale: v.subresources?.scale ?? undefined
})

const strategiesOf = (cv: CustomVersion): VersionStrategies => ({
  strategy: customResourceStrategy(cv),
  subresources: {
    ...(cv.statusSubresource ? { status: customResourceStatusStrategy(cv) } : {}),
    ...(cv.scale !== undefined ? { scale: customResourceStrategy(cv) } : {})
  }
})

/** The converter's coercion into the storage version: pruned by its schema (None conversion keeps the rest). */
const toStorage = (v: CustomVersion) =>
  v.schema === undefined || v.preserveUnknownFields
    ? undefined
    : (obj: Record<string, unknown>) => void pruneResource(obj, v.schema!)

/**
 * An object read from storage as a version serves it (the storage codec's schemaCoercingConverter
 * and unstructuredDefaulter): pruned by that version's schema when it is not the storage version,
 * and defaulted when the schema has defaults. Objects written in the storage version were pruned
 * on write, so reads in it skip the walk.
 */
const readAs = (storage: string, versions: ReadonlyArray<CustomVersion>) => {
  const work = new Map(
    versions
      .filter(
        (v) => v.schema !== undefined && ((v.version !== storage && !v.preserveUnknownFields) || hasDefaults(v.schema))
      )
      .map((v) => [v.version, v])
  )
  if (work.size === 0) return undefined
  return (obj: KubeObject, version: string): KubeObject => {
    const v = work.get(version)
    if (v === undefined) return obj
    const copy = structuredClone(obj) as Record<string, unknown>
    if (v.version !== storage && !v.preserveUnknownFields) pruneResource(copy, v.schema!)
    applyDefaults(copy, v.schema)
    return copy as KubeObject
  }
}

/** The ResourceInfo a stored CRD serves (undefined if it cannot be served). */
export const resourceInfoOfCRD = (crd: KubeObject): ResourceInfo | undefined => {
  const obj = crd as Record<string, unknown>
  if (validateServable(obj).length > 0) return undefined
  const decoded = crdSpecOf(obj)
  if (Either.isLeft(decoded)) return undefined
  const spec = decoded.right
  const names = acceptedNames(spec.names ?? {})
  const all = spec.versions ?? []
  const storage = all.find((v) => v.storage)!
  const served = [storage, ...all.filter((v) => v !== storage)].filter((v) => v.served)
  if (served.length === 0) return undefined
  const namespaced = spec.scope === "Namespaced"
  const kind = names.kind!
  const byVersion = served.map((v) => customVersion(spec, v, kind))
  const storageStrategies = strategiesOf(customVersion(spec, storage, kind))
  return {
    group: spec.group!,
    versions: served.map((v) => v.name),
    storageVersion: storage.name,
    kind,
    listKind: names.listKind,
    plural: names.plural!,
    singular: names.singular,
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    namespaced,
    validateName: isDNS1123Subdomain,
    getAttrs: crAttrs(namespaced),
    selectableFields: namespaced ? ["metadata.name", "metadata.namespace"] : ["metadata.name"],
    fieldLabelError: fieldLabelNotSupported,
    strategicMergePatch: false,
    generation: true,
    verbs: CUSTOM_RESOURCE_VERBS,
    printerColumns: columnsOf(storage.additionalPrinterColumns),
    versionPrinterColumns: Object.fromEntries(served.map((v) => [v.name, columnsOf(v.additionalPrinterColumns)])),
    strategy: storageStrategies.strategy,
    subresources: {
      ...storageStrategies.subresources,
      ...Object.assign({}, ...byVersion.map((v) => strategiesOf(v).subresources))
    },
    versionStrategies: Object.fromEntries(byVersion.map((v) => [v.version, strategiesOf(v)])),
    readAs: readAs(storage.name, byVersion),
    toStorage: toStorage(customVersion(spec, storage, kind)),
    scale: storage.subresources?.scale ?? undefined,
    specReplicasPaths: Object.fromEntries(
      all.map((v) => [apiVersionOf(spec.group!, v.name), v.subresources?.scale?.specReplicasPath ?? null])
    ),
    openAPISchemas: Object.fromEntries(byVersion.map((v) => [v.version, v.schema])),
    custom: true
  }
}

/** The CRD resource (its strategy validates and sets the status, kinds/crd.ts). */
export const crdResource: ResourceInfo = customResourceDefinitions

export interface CrdControllerDeps {
  readonly registry: ResourceRegistry
  readonly crds: StorageShape
  readonly client: EtcdClientShape
  /** --etcd-prefix, normalized ("/registry/") */
  readonly etcdPrefix: string
}

/** What a CRD serves, keyed by its name (plural.group). */
const servedBy = new WeakMap<ResourceRegistry, Map<string, { group: string; plural: string }>>()

const sync = (deps: CrdControllerDeps, crd: KubeObject): Effect.Effect<void> => {
  const byName = servedBy.get(deps.registry)!
  const name = crd.metadata.name ?? ""
  const info = resourceInfoOfCRD(crd)
  const before = byName.get(name)
  if (info === undefined) return before === undefined ? Effect.void : remove(deps, name, false)
  byName.set(name, { group: info.group, plural: info.plural })
  return deps.registry.put(info)
}

const remove = (deps: CrdControllerDeps, name: string, purge: boolean): Effect.Effect<void> => {
  const byName = servedBy.get(deps.registry)!
  const r = byName.get(name)
  if (r === undefined) return Effect.void
  byName.delete(name)
  const stop = deps.registry.remove(r.group, r.plural)
  if (!purge) return stop
  // the objects go with their definition (a new CRD of the same name starts empty)
  const prefix = deps.etcdPrefix + resourcePrefixOf(r).slice(1) + "/"
  return Effect.zipRight(stop, Effect.ignore(deps.client.kv.delete(prefix, { prefix: true })))
}

/**
 * The controller: list, serve what is there (and stop serving what is gone), then follow the
 * watch from the list's RV; when the watch ends (410, cache restart) it lists again.
 */
export const runCrdController = (deps: CrdControllerDeps, synced: Deferred.Deferred<void>): Effect.Effect<void> => {
  servedBy.set(deps.registry, new Map())
  const crdKey = resourcePrefixOf(customResourceDefinitions) + "/"
  const once = Effect.gen(function* () {
    const list = yield* deps.crds.getList(crdKey, { recursive: true })
    const present = new Set(list.items.map((c) => c.metadata.name ?? ""))
    for (const name of Array.from(servedBy.get(deps.registry)!.keys()))
      if (!present.has(name)) yield* remove(deps, name, false)
    for (const crd of list.items) yield* sync(deps, crd)
    yield* Deferred.succeed(synced, undefined)
    const events = yield* deps.crds.watch(crdKey, {
      recursive: true,
      resourceVersion: list.metadata.resourceVersion ?? "0"
    })
    yield* Stream.runForEach(events, (e) => {
      switch (e.type) {
        case "ADDED":
        case "MODIFIED":
          return sync(deps, e.object)
        case "DELETED":
          return remove(deps, e.object.metadata.name ?? "", true)
        default:
          return Effect.void
      }
    })
  })
  // what storage fails with is logged and retried; a defect ends the loop, reported
  return supervised(
    "CRD controller",
    once.pipe(
      Effect.either,
      Effect.tap((r) => (Either.isLeft(r) ? Effect.logWarning(`CRD controller: ${r.left.message}`) : Effect.void)),
      Effect.repeat(Schedule.spaced(Duration.millis(100))),
      Effect.zipRight(Effect.never)
    )
  )
}
