/**
 * kube-openapi's schemaconv (openapi.go, smd.go): OpenAPI v2 definitions → a TypeSchema. Used for
 * the built-in kinds (proto/k8s.io/openapi/definitions.json, vendored from Kubernetes) and for a
 * CRD's version (its structural schema, with metadata as ObjectMeta).
 */
import {
  type Atom,
  DEDUCED,
  type ListType,
  type MapType,
  type Relationship,
  type TypeRef,
  TypeSchema,
  UNTYPED
} from "./type-schema.js"
import type { Json } from "./value.js"

export interface OpenApiSchema {
  readonly type?: string | ReadonlyArray<string>
  readonly format?: string
  readonly $ref?: string
  readonly allOf?: ReadonlyArray<OpenApiSchema>
  readonly properties?: Readonly<Record<string, OpenApiSchema>>
  readonly additionalProperties?: OpenApiSchema | boolean
  readonly items?: OpenApiSchema
  readonly default?: Json
  readonly nullable?: boolean
  readonly [extension: `x-${string}`]: unknown
}

const listRelationship = (s: OpenApiSchema): { relationship: Relationship; keys: Array<string> } => {
  const t = s["x-kubernetes-list-type"]
  if (t !== undefined) {
    if (t === "set") return { relationship: "associative", keys: [] }
    if (t === "map") {
      const keys = s["x-kubernetes-list-map-keys"]
      return { relationship: "associative", keys: Array.isArray(keys) ? keys.filter((k) => typeof k === "string") : [] }
    }
    return { relationship: "atomic", keys: [] }
  }
  const p = s["x-kubernetes-patch-strategy"]
  if (p === "merge" || p === "merge,retainKeys") {
    const k = s["x-kubernetes-patch-merge-key"]
    return { relationship: "associative", keys: typeof k === "string" ? [k] : [] }
  }
  return { relationship: "atomic", keys: [] }
}

const mapRelationship = (s: OpenApiSchema): Relationship => {
  const t = s["x-kubernetes-map-type"]
  return t === "atomic" ? "atomic" : t === "granular" ? "separable" : ""
}

const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)

class Converter {
  constructor(private readonly preserveUnknownFields: boolean) {}

  /** makeOpenAPIRef */
  ref(s: OpenApiSchema): TypeRef {
    const ref = s.$ref ?? (s.allOf?.length === 1 ? s.allOf[0]!.$ref : undefined)
    if (ref !== undefined && refName(ref) !== "") {
      const r = mapRelationship(s)
      return r === "" ? { named: refName(ref) } : { named: refName(ref), relationship: r }
    }
    return { inlined: this.atom(s) }
  }

  /** parseSchema */
  atom(s: OpenApiSchema): Atom {
    const type = Array.isArray(s.type) ? (s.type[0] ?? "") : ((s.type as string | undefined) ?? "")
    switch (type) {
      case "":
        return { scalar: true, list: this.list(s), map: this.object(s) }
      case "object":
        return { map: this.object(s) }
      case "array":
        return { list: this.list(s) }
      default:
        return { scalar: true }
    }
  }

  object(s: OpenApiSchema): MapType {
    const fields = new Map<string, { type: TypeRef; default?: Json }>()
    for (const [name, member] of Object.entries(s.properties ?? {}))
      fields.set(
        name,
        member.default === undefined ? { type: this.ref(member) } : { type: this.ref(member), default: member.default }
      )
    const ap = s.additionalProperties
    const elementType: TypeRef | undefined =
      ap === undefined
        ? this.preserveUnknownFields || fields.size === 0 || s["x-kubernetes-preserve-unknown-fields"] === true
          ? { named: DEDUCED }
          : undefined
        : typeof ap === "object"
          ? this.ref(ap)
          : ap
            ? { named: DEDUCED }
            : undefined
    return { fields, elementType, relationship: mapRelationship(s) }
  }

  list(s: OpenApiSchema): ListType {
    const { relationship, keys } = listRelationship(s)
    return { elementType: s.items === undefined ? { named: UNTYPED } : this.ref(s.items), relationship, keys }
  }
}

/** ToSchemaFromOpenAPI: every definition a named type. */
export const fromOpenApi = (
  definitions: Readonly<Record<string, OpenApiSchema>>,
  preserveUnknownFields = false
): TypeSchema => {
  const c = new Converter(preserveUnknownFields)
  const types = new Map<string, Atom>()
  for (const [name, def] of Object.entries(definitions)) types.set(name, c.atom(def))
  return new TypeSchema(types)
}
