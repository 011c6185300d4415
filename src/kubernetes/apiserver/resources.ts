/**
 * What the apiserver serves: one `ResourceInfo` per resource (the APIResource of discovery plus
 * what the handlers need: kind, list kind, scope, name rules, selectable fields, printer columns),
 * and the built-in types: core/v1 Namespace, ConfigMap, Secret and apiextensions.k8s.io/v1
 * CustomResourceDefinition. Custom resources get theirs from their CRD (crd.ts).
 */
import type { KubeObject } from "../api/object-meta.js"
import { fieldLabelNotSupported } from "../api/fields.js"
import type { GroupResource } from "../api/status.js"
import { isDNS1123Label, isDNS1123Subdomain } from "../api/validation.js"
import { type AttrFunc, defaultAttrs } from "../storage/selection-predicate.js"
import { configMapStrategy } from "./kinds/configmap.js"
import { crdStrategy } from "./kinds/crd.js"
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

export const groupResourceOf = (r: ResourceInfo): GroupResource => ({ group: r.group, resource: r.plural })

export const apiVersionOf = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`)

/** The storage's resource prefix: "/configmaps", "/example.com/widgets" (keys below /registry). */
export const resourcePrefixOf = (r: { readonly group: string; readonly plural: string }): string =>
  r.group === "" ? `/${r.plural}` : `/${r.group}/${r.plural}`

/** The storage key of an object (or of a list: namespace undefined means every namespace). */
export const keyOf = (r: ResourceInfo, namespace: string | undefined, name?: string): string => {
  const base = resourcePrefixOf(r)
  if (!r.namespaced || namespace === undefined) return name === undefined ? `${base}/` : `${base}/${name}`
  return name === undefined ? `${base}/${namespace}/` : `${base}/${namespace}/${name}`
}

export const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"] as const

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

/** duration.HumanDuration (apimachinery): "45s", "5m10s", "3h", "2d4h", "400d", "3y10d". */
export const humanDuration = (ms: number): string => {
  if (!Number.isFinite(ms)) return "<unknown>"
  const seconds = Math.floor(ms / 1000)
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 60 * 2) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`
  if (minutes < 60 * 3) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`
  if (hours < 48) return `${hours}h`
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`
  }
  return `${Math.floor(hours / 24 / 365)}y`
}

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

export const builtinResources: ReadonlyArray<ResourceInfo> = [
  namespaces,
  configmaps,
  secrets,
  customResourceDefinitions
]
