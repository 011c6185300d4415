/**
 * apiextensions-apiserver: CustomResourceDefinitions. A CRD is validated (the rules of
 * apiextensions/validation that matter for serving), gets its status on every write (names
 * accepted, Established, storedVersions), and the CRD controller — the crdHandler's informer —
 * serves its resource from the moment the CRD is stored: it lists the CRDs at start (they live in
 * etcd, so they come back after a restart) and then follows their watch, adding, updating and
 * removing resources in the registry. Deleting a CRD stops serving it and deletes its objects
 * (the customresourcecleanup finalizer's work, done at once). `synced` completes once the CRDs
 * stored at start are served (the server listens only then).
 */
import { Deferred, Duration, Effect, Either, Schedule, Stream } from "effect"
import type { EtcdClientService } from "../../client/client.js"
import type { KubeObject } from "../api/object-meta.js"
import type { FieldError } from "../api/status.js"
import { isDNS1123Label, isDNS1123Subdomain } from "../api/validation.js"
import type { StorageService } from "../storage/interfaces.js"
import { type Attrs, defaultAttrs } from "../storage/selection-predicate.js"
import type { ResourceRegistry } from "./registry.js"
import { customResourceDefinitions, type PrinterColumn, type ResourceInfo, resourcePrefixOf } from "./resources.js"

interface CrdNames {
  readonly plural?: string
  readonly singular?: string
  readonly kind?: string
  readonly listKind?: string
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
}

interface CrdVersion {
  readonly name?: string
  readonly served?: boolean
  readonly storage?: boolean
  readonly additionalPrinterColumns?: ReadonlyArray<PrinterColumn>
}

interface CrdSpec {
  readonly group?: string
  readonly names?: CrdNames
  readonly scope?: string
  readonly versions?: ReadonlyArray<CrdVersion>
}

const specOf = (obj: Record<string, unknown>): CrdSpec => {
  const s = obj["spec"]
  return typeof s === "object" && s !== null && !Array.isArray(s) ? (s as CrdSpec) : {}
}

const required = (field: string): FieldError => ({ type: "FieldValueRequired", field, message: "Required value" })
const invalidValue = (field: string, value: unknown, detail: string): FieldError => ({
  type: "FieldValueInvalid",
  field,
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`
})

/** apiextensions validation, the rules that decide whether a resource can be served. */
export const validateCRD = (obj: Record<string, unknown>): ReadonlyArray<FieldError> => {
  const errs: Array<FieldError> = []
  const spec = specOf(obj)
  const names = spec.names ?? {}
  const name = (obj["metadata"] as { name?: string } | undefined)?.name ?? ""
  if (spec.group === undefined || spec.group === "") errs.push(required("spec.group"))
  else if (isDNS1123Subdomain(spec.group).length > 0 || !spec.group.includes(".")) {
    errs.push(invalidValue("spec.group", spec.group, "should be a domain with at least one dot"))
  }
  if (names.plural === undefined || names.plural === "") errs.push(required("spec.names.plural"))
  else if (isDNS1123Label(names.plural).length > 0)
    errs.push(invalidValue("spec.names.plural", names.plural, isDNS1123Label(names.plural)[0]!))
  if (names.singular !== undefined && names.singular !== "" && isDNS1123Label(names.singular).length > 0) {
    errs.push(invalidValue("spec.names.singular", names.singular, isDNS1123Label(names.singular)[0]!))
  }
  if (names.kind === undefined || names.kind === "") errs.push(required("spec.names.kind"))
  if (spec.group !== undefined && names.plural !== undefined && name !== `${names.plural}.${spec.group}`) {
    errs.push(invalidValue("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
  }
  if (spec.scope !== "Namespaced" && spec.scope !== "Cluster") {
    errs.push(
      spec.scope === undefined || spec.scope === ""
        ? required("spec.scope")
        : {
            type: "FieldValueNotSupported",
            field: "spec.scope",
            message: `Unsupported value: ${JSON.stringify(spec.scope)}: supported values: "Cluster", "Namespaced"`
          }
    )
  }
  const versions = Array.isArray(spec.versions) ? spec.versions : []
  if (versions.length === 0)
    errs.push(invalidValue("spec.versions", [], "must have exactly one version marked as storage version"))
  else {
    const storage = versions.filter((v) => v.storage === true).length
    if (storage !== 1)
      errs.push(
        invalidValue(
          "spec.versions",
          versions.map((v) => v.name),
          "must have exactly one version marked as storage version"
        )
      )
    versions.forEach((v, i) => {
      if (typeof v.name !== "string" || isDNS1123Label(v.name).length > 0) {
        errs.push(invalidValue(`spec.versions[${i}].name`, v.name ?? "", "must be a DNS-1035 label"))
      }
    })
  }
  return errs
}

const acceptedNames = (names: CrdNames) => ({
  plural: names.plural,
  singular: names.singular !== undefined && names.singular !== "" ? names.singular : (names.kind ?? "").toLowerCase(),
  kind: names.kind,
  listKind: names.listKind !== undefined && names.listKind !== "" ? names.listKind : `${names.kind}List`,
  ...(names.shortNames !== undefined && names.shortNames.length > 0 ? { shortNames: names.shortNames } : {}),
  ...(names.categories !== undefined && names.categories.length > 0 ? { categories: names.categories } : {})
})

/** The status a served CRD has: names accepted and Established (this server has no naming conflicts to wait for). */
export const setCRDStatus = (obj: Record<string, unknown>): void => {
  const spec = specOf(obj)
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z")
  const prev = (obj["status"] ?? {}) as { storedVersions?: ReadonlyArray<string> }
  const storage = (spec.versions ?? []).find((v) => v.storage === true)?.name
  const stored = new Set(prev.storedVersions ?? [])
  if (storage !== undefined) stored.add(storage)
  obj["status"] = {
    conditions: [
      {
        type: "NamesAccepted",
        status: "True",
        lastTransitionTime: now,
        reason: "NoConflicts",
        message: "no conflicts found"
      },
      {
        type: "Established",
        status: "True",
        lastTransitionTime: now,
        reason: "InitialNamesAccepted",
        message: "the initial names have been accepted"
      }
    ],
    acceptedNames: acceptedNames(spec.names ?? {}),
    storedVersions: Array.from(stored)
  }
}

const AGE_DATE: PrinterColumn = {
  name: "Age",
  type: "date",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  jsonPath: ".metadata.creationTimestamp"
}

const crAttrs =
  (namespaced: boolean) =>
  (obj: KubeObject): Attrs => {
    if (namespaced) return defaultAttrs(obj)
    return { labels: obj.metadata.labels ?? {}, fields: { "metadata.name": obj.metadata.name ?? "" } }
  }

/** The ResourceInfo a stored CRD serves (undefined if it cannot be served). */
export const resourceInfoOfCRD = (crd: KubeObject): ResourceInfo | undefined => {
  const obj = crd as Record<string, unknown>
  if (validateCRD(obj).length > 0) return undefined
  const spec = specOf(obj)
  const names = acceptedNames(spec.names ?? {})
  const versions = (spec.versions ?? []).filter((v) => v.served !== false)
  const storage = (spec.versions ?? []).find((v) => v.storage === true)!
  if (versions.length === 0) return undefined
  const namespaced = spec.scope === "Namespaced"
  const served = [storage, ...versions.filter((v) => v !== storage && v.served !== false)].filter(
    (v) => v.served !== false
  )
  const columns = storage.additionalPrinterColumns ?? versions[0]!.additionalPrinterColumns
  return {
    group: spec.group!,
    versions: served.map((v) => v.name!),
    storageVersion: storage.name!,
    kind: names.kind!,
    listKind: names.listKind,
    plural: names.plural!,
    singular: names.singular,
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    namespaced,
    validateName: isDNS1123Subdomain,
    getAttrs: crAttrs(namespaced),
    selectableFields: namespaced ? ["metadata.name", "metadata.namespace"] : ["metadata.name"],
    strategicMergePatch: false,
    generation: true,
    printerColumns:
      columns === undefined || columns.length === 0
        ? [AGE_DATE]
        : columns.map((c) => ({
            name: c.name,
            type: c.type,
            format: c.format,
            description: c.description,
            priority: c.priority,
            jsonPath: c.jsonPath
          })),
    custom: true
  }
}

/** The CRD resource with its validation and status hooks. */
export const crdResource: ResourceInfo = {
  ...customResourceDefinitions,
  validate: validateCRD,
  prepareForCreate: setCRDStatus,
  prepareForUpdate: setCRDStatus
}

export interface CrdControllerDeps {
  readonly registry: ResourceRegistry
  readonly crds: StorageService
  readonly client: EtcdClientService
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
export const runCrdController = (deps: CrdControllerDeps, synced: Deferred.Deferred<void>): Effect.Effect<never> => {
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
  return once.pipe(
    Effect.either,
    Effect.tap((r) => (Either.isLeft(r) ? Effect.logWarning(`CRD controller: ${r.left.message}`) : Effect.void)),
    Effect.repeat(Schedule.spaced(Duration.millis(100))),
    Effect.zipRight(Effect.never)
  )
}
