/**
 * What the apiserver serves: one `ResourceInfo` per resource (the APIResource of discovery plus
 * what the handlers need: kind, list kind, scope, name rules, selectable fields, printer columns),
 * and the built-in types: core/v1 Namespace, ConfigMap, Secret, Event, events.k8s.io/v1 Event,
 * coordination.k8s.io/v1 Lease and apiextensions.k8s.io/v1 CustomResourceDefinition. Custom
 * resources get theirs from their CRD (crd.ts).
 */
import type { KubeObject } from "../api/object-meta.js"
import { fieldLabelNotSupported } from "../api/fields.js"
import type { GroupResource } from "../api/status.js"
import { isDNS1123Label, isDNS1123Subdomain } from "../api/validation.js"
import { humanDuration } from "./duration.js"
import { type AttrFunc, defaultAttrs } from "../storage/selection-predicate.js"
import type { StorageCodec } from "./converting-storage.js"
import { configMapStrategy } from "./kinds/configmap.js"
import { crdStrategy } from "./kinds/crd.js"
import { CORE_EVENT_FIELDS, coreEventAttrs, coreEventStrategy, isValidPathSegmentName } from "./kinds/event.js"
import { coreToEventV1, EVENT_V1_FIELDS, eventV1Attrs, eventV1Strategy, eventV1ToCore } from "./kinds/event-v1.js"
import { eventColumns } from "./kinds/event-table.js"
import { leaseSpecOf, leaseStrategy } from "./kinds/lease.js"
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaceStrategy } from "./kinds/namespace.js"
import { secretStrategy } from "./kinds/secret.js"
import type { KindStrategy } from "./kinds/strategy.js"
import type { JSONSchemaProps } from "./schema/json-schema.js"

/** A CRD's additionalPrinterColumns entry (and the built-in printers' extra columns). */
export interface PrinterColumn {
  readonly name: string
  readonly type: string
  readonly format?: string | undefined
  readonly description?: string | undefined
  readonly priority?: number | undefined
  /** a CRD's jsonPath (".spec.replicas"); built-in columns compute their cell */
  readonly jsonPath?: string | undefined
  readonly cell?: ((obj: KubeObject) => unknown) | undefined
}

/** What the API knows of a resource: its group, versions, kind and names, scope, subresources, columns and schema. */
export interface ResourceInfo {
  readonly group: string
  /** the served versions, the storage version first */
  readonly versions: ReadonlyArray<string>
  /** the version objects are stored as */
  readonly storageVersion: string
  readonly kind: string
  readonly listKind: string
  /** the resource name in URLs (plural) */
  readonly plural: string
  readonly singular: string
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly namespaced: boolean
  /** the name rule of metadata.name (path segment name validation) */
  readonly validateName: (name: string) => ReadonlyArray<string>
  /** labels and selectable fields */
  readonly getAttrs: AttrFunc
  readonly selectableFields: ReadonlyArray<string>
  /** the field label conversion's error for another field (default: the meta/v1 conversion's) */
  readonly fieldLabelError?: ((field: string) => string) | undefined
  /** strategic-merge-patch is accepted (built-in types only) */
  readonly strategicMergePatch: boolean
  /** metadata.generation is kept (bumped when anything but metadata/status changes) */
  readonly generation: boolean
  /** the Table columns after NAME (AGE included where the resource's printer has one) */
  readonly printerColumns: ReadonlyArray<PrinterColumn>
  /** a CRD's columns of each served version (each version has its own additionalPrinterColumns) */
  readonly versionPrinterColumns?: Readonly<Record<string, ReadonlyArray<PrinterColumn>>> | undefined
  /** how the kind is decoded, defaulted, prepared, validated and deleted (kinds/) */
  readonly strategy: KindStrategy
  /** the subresources served beside the main resource, with their strategies (namespaces: status, finalize) */
  readonly subresources: Readonly<Record<string, KindStrategy>>
  /** a CRD-served resource */
  readonly custom: boolean
  /**
   * A CRD's versions, each with its own schema: the main resource's and the subresources'
   * strategies of a request to that version (the resource's own are the storage version's)
   */
  readonly versionStrategies?: Readonly<Record<string, VersionStrategies>> | undefined
  /** an object written in another version, converted to the storage version (a CRD's pruning by its schema) */
  readonly toStorage?: ((obj: Record<string, unknown>) => void) | undefined
  /** an object read from storage as a version serves it (a CRD's pruning and defaults), a copy */
  readonly readAs?: ((obj: KubeObject, version: string) => KubeObject) | undefined
  /** a CRD's openAPIV3Schema of each version (/openapi/v3 publishes them for kubectl explain) */
  readonly openAPISchemas?: Readonly<Record<string, JSONSchemaProps | undefined>> | undefined
  /** the scale subresource's paths (a CRD's spec.versions[].subresources.scale) */
  readonly scale?: ScalePaths | undefined
  /**
   * Each of a CRD's versions (served or not, by apiVersion) to its scale subresource's
   * specReplicasPath, null without one: the managedFields mapping of a scale write (ScaleHandler)
   */
  readonly specReplicasPaths?: Readonly<Record<string, string | null>> | undefined
  /** the verbs discovery lists and the routes take (default VERBS) */
  readonly verbs?: ReadonlyArray<string> | undefined
  /** the Table's first column is NAME (Events print it last, among their own columns) */
  readonly nameColumn?: boolean | undefined
  /** where the objects live below the etcd prefix when not at the group/resource's own prefix ("/events") */
  readonly storagePrefix?: string | undefined
  /** how served objects are stored, when the stored shape is another version's (events.k8s.io/v1) */
  readonly storageCodec?: StorageCodec | undefined
  /** another group serves the same stored objects (Events): watch events are not shared across groups */
  readonly sharedStorage?: boolean | undefined
  /** the Store's TTLFunc: every create and update is written with an etcd lease of this many seconds */
  readonly ttlSeconds?: number | undefined
}

export interface VersionStrategies {
  readonly strategy: KindStrategy
  readonly subresources: Readonly<Record<string, KindStrategy>>
}

export interface ScalePaths {
  readonly specReplicasPath: string
  readonly statusReplicasPath: string
  readonly labelSelectorPath?: string | undefined
}

export { humanDuration } from "./duration.js"

export const groupResourceOf = (r: ResourceInfo): GroupResource => ({ group: r.group, resource: r.plural })

export const apiVersionOf = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`)

/** The storage's resource prefix: "/configmaps", "/example.com/widgets" (keys below /registry). */
export const resourcePrefixOf = (r: {
  readonly group: string
  readonly plural: string
  readonly storagePrefix?: string | undefined
}): string => r.storagePrefix ?? (r.group === "" ? `/${r.plural}` : `/${r.group}/${r.plural}`)

/** The storage key of an object (or of a list: namespace undefined means every namespace). */
export const keyOf = (r: ResourceInfo, namespace: string | undefined, name?: string): string => {
  const base = resourcePrefixOf(r)
  if (!r.namespaced || namespace === undefined) return name === undefined ? `${base}/` : `${base}/${name}`
  return name === undefined ? `${base}/${namespace}/` : `${base}/${namespace}/${name}`
}

export const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"] as const

/** A custom resource's verbs, in the order apiextensions-apiserver lists them */
export const CUSTOM_RESOURCE_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]

export const verbsOf = (r: ResourceInfo): ReadonlyArray<string> => r.verbs ?? VERBS

const dataCount = (obj: KubeObject): number => {
  const count = (u: unknown) => (typeof u === "object" && u !== null ? Object.keys(u).length : 0)
  return count(obj["data"]) + count(obj["binaryData"])
}

/** The built-in printers' AGE: a duration since creationTimestamp, rendered by the server. */
export const ageColumn = (now: () => number): PrinterColumn => ({
  name: "Age",
  type: "string",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  cell: (o) => humanDuration(now() - Date.parse(o.metadata.creationTimestamp ?? ""))
})

const age = ageColumn(() => Date.now())

const namespaceAttrs: AttrFunc = (obj) => ({
  labels: obj.metadata.labels ?? {},
  fields: {
    "metadata.name": obj.metadata.name ?? "",
    "status.phase": (obj["status"] as { phase?: string } | undefined)?.phase ?? ""
  }
})

const secretAttrs: AttrFunc = (obj) => ({
  labels: obj.metadata.labels ?? {},
  fields: {
    "metadata.name": obj.metadata.name ?? "",
    "metadata.namespace": obj.metadata.namespace ?? "",
    type: typeof obj["type"] === "string" ? obj["type"] : ""
  }
})

const builtin = (
  r: Omit<ResourceInfo, "custom" | "categories" | "strategicMergePatch" | "generation" | "listKind" | "subresources"> &
    Partial<ResourceInfo>
): ResourceInfo => ({
  custom: false,
  subresources: {},
  categories: [],
  strategicMergePatch: true,
  generation: false,
  listKind: `${r.kind}List`,
  ...r
})

export const namespaces = builtin({
  group: "",
  versions: ["v1"],
  storageVersion: "v1",
  kind: "Namespace",
  plural: "namespaces",
  singular: "namespace",
  shortNames: ["ns"],
  namespaced: false,
  // the namespaces' REST has no DeleteCollection
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  validateName: isDNS1123Label,
  getAttrs: namespaceAttrs,
  selectableFields: ["metadata.name", "status.phase"],
  fieldLabelError: fieldLabelNotSupported,
  printerColumns: [
    {
      name: "Status",
      type: "string",
      description: "The status of the namespace",
      cell: (o) => (o["status"] as { phase?: string } | undefined)?.phase ?? ""
    },
    age
  ],
  strategy: namespaceStrategy,
  subresources: { status: namespaceStatusStrategy, finalize: namespaceFinalizeStrategy }
})

export const configmaps = builtin({
  group: "",
  versions: ["v1"],
  storageVersion: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  singular: "configmap",
  shortNames: ["cm"],
  namespaced: true,
  validateName: isDNS1123Subdomain,
  getAttrs: defaultAttrs,
  selectableFields: ["metadata.name", "metadata.namespace"],
  printerColumns: [{ name: "Data", type: "integer", description: "Number of data entries", cell: dataCount }, age],
  strategy: configMapStrategy
})

export const secrets = builtin({
  group: "",
  versions: ["v1"],
  storageVersion: "v1",
  kind: "Secret",
  plural: "secrets",
  singular: "secret",
  shortNames: [],
  namespaced: true,
  validateName: isDNS1123Subdomain,
  getAttrs: secretAttrs,
  selectableFields: ["metadata.name", "metadata.namespace", "type"],
  fieldLabelError: fieldLabelNotSupported,
  printerColumns: [
    {
      name: "Type",
      type: "string",
      description: "The type of the secret",
      cell: (o) => (typeof o["type"] === "string" ? o["type"] : "")
    },
    { name: "Data", type: "string", description: "Number of data entries", cell: (o) => dataCount(o) },
    age
  ],
  strategy: secretStrategy
})

export const customResourceDefinitions = builtin({
  group: "apiextensions.k8s.io",
  versions: ["v1"],
  storageVersion: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  singular: "customresourcedefinition",
  shortNames: ["crd", "crds"],
  categories: ["api-extensions"],
  namespaced: false,
  validateName: isDNS1123Subdomain,
  getAttrs: defaultAttrs,
  selectableFields: ["metadata.name", "metadata.namespace"],
  strategicMergePatch: false,
  generation: true,
  printerColumns: [
    {
      name: "Created At",
      type: "date",
      description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
      jsonPath: ".metadata.creationTimestamp"
    }
  ],
  strategy: crdStrategy
})

export const leases = builtin({
  group: "coordination.k8s.io",
  versions: ["v1"],
  storageVersion: "v1",
  kind: "Lease",
  plural: "leases",
  singular: "lease",
  shortNames: [],
  namespaced: true,
  validateName: isDNS1123Subdomain,
  getAttrs: defaultAttrs,
  selectableFields: ["metadata.name", "metadata.namespace"],
  printerColumns: [
    {
      name: "Holder",
      type: "string",
      description:
        "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
      cell: (o) => leaseSpecOf(o).holderIdentity ?? ""
    },
    age
  ],
  strategy: leaseStrategy,
  // the apiserver's storage prefix of a built-in resource is the resource alone: /registry/leases
  storagePrefix: "/leases"
})

/** --event-ttl's default: one hour */
export const DEFAULT_EVENT_TTL_SECONDS = 3600

/**
 * core/v1 `events` and events.k8s.io/v1 `events`: one storage under /registry/events (core/v1
 * objects), the second group's served through a conversion; every write carries the event TTL.
 */
export const eventResources = (ttlSeconds = DEFAULT_EVENT_TTL_SECONDS): ReadonlyArray<ResourceInfo> => {
  const common = {
    versions: ["v1"],
    storageVersion: "v1",
    kind: "Event",
    plural: "events",
    singular: "event",
    shortNames: ["ev"],
    namespaced: true,
    validateName: isDNS1123Subdomain,
    fieldLabelError: fieldLabelNotSupported,
    nameColumn: false,
    storagePrefix: "/events",
    sharedStorage: true,
    ttlSeconds
  }
  return [
    builtin({
      ...common,
      group: "",
      // core/v1 Events have no name rule of their own: only the path segment's
      validateName: isValidPathSegmentName,
      getAttrs: coreEventAttrs,
      selectableFields: CORE_EVENT_FIELDS,
      printerColumns: eventColumns((o) => o),
      strategy: coreEventStrategy
    }),
    builtin({
      ...common,
      group: "events.k8s.io",
      getAttrs: eventV1Attrs,
      selectableFields: EVENT_V1_FIELDS,
      printerColumns: eventColumns(eventV1ToCore),
      strategy: eventV1Strategy,
      storageCodec: { toStorage: eventV1ToCore, fromStorage: coreToEventV1 }
    })
  ]
}

export const builtinResources: ReadonlyArray<ResourceInfo> = [
  namespaces,
  configmaps,
  secrets,
  leases,
  ...eventResources(),
  customResourceDefinitions
]
