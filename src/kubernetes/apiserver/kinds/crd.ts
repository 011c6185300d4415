/**
 * The CustomResourceDefinition strategy: apiextensions validation of what decides whether a
 * resource can be served (group, names, scope, versions and the one storage version), and the
 * status a served CRD has (names accepted and Established — this server has no naming conflicts
 * to wait for), written on every create and update as the CRD controllers would.
 */
import * as F from "../../api/field.js"
import type { FieldError } from "../../api/status.js"
import { isDNS1123Label, isDNS1123Subdomain } from "../../api/validation.js"
import { Either } from "effect"
import { type CrdSpec, crdSpecOf, versionSchema } from "../schema/json-schema.js"
import { validateVersionSchema } from "../schema/structural.js"
import { CustomResourceDefinition } from "./crd-type.js"
import { type MetaRules, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy, Obj } from "./strategy.js"

type CrdNames = NonNullable<CrdSpec["names"]>

/** The decoded spec (a CRD written here always decodes: its Go type was checked on write). */
export const specOf = (obj: Record<string, unknown>): CrdSpec => Either.getOrElse(crdSpecOf(obj), () => ({}))

/**
 * apiextensions validation: what decides whether a resource can be served, then the versions'
 * schemas (structural, required in v1) and subresources.
 */
export const validateCRDSpec = (obj: Record<string, unknown>): Array<FieldError> => [
  ...validateServable(obj),
  ...validateVersions(specOf(obj)),
  ...(specOf(obj).preserveUnknownFields === true
    ? [
        F.invalid(
          "spec.preserveUnknownFields",
          true,
          "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        )
      ]
    : [])
]

/**
 * The rules that decide whether a stored CRD's resource can be served (group, names, scope, one
 * storage version). A CRD stored before schemas were checked here is still served (its objects
 * then unpruned and unchecked), so an upgrade never hides stored objects.
 */
export const validateServable = (obj: Record<string, unknown>): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const spec = specOf(obj)
  const names = spec.names ?? {}
  const name = (obj["metadata"] as { name?: string } | undefined)?.name ?? ""
  if (spec.group === undefined || spec.group === "") errs.push(F.required("spec.group"))
  else if (isDNS1123Subdomain(spec.group).length > 0 || !spec.group.includes(".")) {
    errs.push(F.invalid("spec.group", spec.group, "should be a domain with at least one dot"))
  }
  if (names.plural === undefined || names.plural === "") errs.push(F.required("spec.names.plural"))
  else if (isDNS1123Label(names.plural).length > 0)
    errs.push(F.invalid("spec.names.plural", names.plural, isDNS1123Label(names.plural)[0]!))
  if (names.singular !== undefined && names.singular !== "" && isDNS1123Label(names.singular).length > 0) {
    errs.push(F.invalid("spec.names.singular", names.singular, isDNS1123Label(names.singular)[0]!))
  }
  if (names.kind === undefined || names.kind === "") errs.push(F.required("spec.names.kind"))
  if (spec.group !== undefined && names.plural !== undefined && name !== `${names.plural}.${spec.group}`) {
    errs.push(F.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
  }
  if (spec.scope !== "Namespaced" && spec.scope !== "Cluster") {
    errs.push(
      spec.scope === undefined || spec.scope === ""
        ? F.required("spec.scope")
        : F.notSupported("spec.scope", spec.scope, ["Cluster", "Namespaced"])
    )
  }
  const versions = Array.isArray(spec.versions) ? spec.versions : []
  const storageMsg = "must have exactly one version marked as storage version"
  if (versions.length === 0) errs.push(F.invalid("spec.versions", [], storageMsg))
  else {
    if (versions.filter((v) => v.storage === true).length !== 1)
      errs.push(
        F.invalid(
          "spec.versions",
          versions.map((v) => v.name ?? null),
          storageMsg
        )
      )
    versions.forEach((v, i) => {
      if (typeof v.name !== "string" || isDNS1123Label(v.name).length > 0) {
        errs.push(F.invalid(`spec.versions[${i}].name`, v.name ?? "", "must be a DNS-1035 label"))
      }
    })
  }
  return errs
}

/** validateSimpleJSONPath and the scale paths' prefixes */
const scalePath = (path: string, value: string | undefined, under: ReadonlyArray<string>, what: string) => {
  if (value === undefined || value === "") return [F.required(path)]
  if (value[0] !== ".") return [F.invalid(path, value, "must be a simple json path starting with .")]
  if (!under.some((u) => value.startsWith(`.${u}.`)))
    return [F.invalid(path, value, `should be a json path under ${what}`)]
  return []
}

/** Each version: a schema (required for v1), structural; the scale subresource's paths. */
const validateVersions = (spec: CrdSpec): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const versions = spec.versions ?? []
  versions.forEach((v, i) => {
    if (versionSchema(v) === undefined) errs.push(F.required(`spec.versions[${i}].schema.openAPIV3Schema`))
  })
  versions.forEach((v, i) => {
    const base = `spec.versions[${i}]`
    const schema = versionSchema(v)
    if (schema !== undefined) errs.push(...validateVersionSchema(`${base}.schema.openAPIV3Schema`, schema))
    const scale = v.subresources?.scale
    if (scale !== undefined) {
      const sub = `${base}.subresources.scale`
      errs.push(...scalePath(`${sub}.specReplicasPath`, scale.specReplicasPath, ["spec"], ".spec"))
      errs.push(...scalePath(`${sub}.statusReplicasPath`, scale.statusReplicasPath, ["status"], ".status"))
      if (scale.labelSelectorPath !== undefined && scale.labelSelectorPath !== "")
        errs.push(
          ...scalePath(
            `${sub}.labelSelectorPath`,
            scale.labelSelectorPath,
            ["spec", "status"],
            "either .spec or .status"
          )
        )
    }
  })
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

export { acceptedNames }

/** The status a served CRD has: names accepted and Established. */
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

const rules: MetaRules = { namespaced: false, validateName: isDNS1123Subdomain, core: false }

export const crdStrategy: KindStrategy = {
  schema: CustomResourceDefinition,
  core: false,
  returnDeletedObject: false,
  prepareForCreate: setCRDStatus,
  prepareForUpdate: (obj: Obj) => setCRDStatus(obj),
  validate: (obj) => [...validateObjectMeta(obj.metadata, rules), ...validateCRDSpec(obj)],
  validateUpdate: (obj, old) => [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules),
    ...validateCRDSpec(obj)
  ]
}
