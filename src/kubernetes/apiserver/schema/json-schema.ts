/**
 * apiextensions.k8s.io/v1 JSONSchemaProps and the parts of a CRD spec the server acts on, decoded
 * with effect/Schema from the stored CRD (issue 30: no casts of stored JSON). The CRD was type
 * checked against its Go type when it was written (kinds/crd-type.ts); this is the view the
 * schema stages (structural.ts, validation.ts, pruning.ts, defaulting.ts) and the CRD controller
 * read. Unknown keys are ignored, as Go's decoding into the typed spec would.
 */
import { Either, Schema } from "effect"

export interface JSONSchemaProps {
  readonly type?: string | undefined
  readonly format?: string | undefined
  readonly description?: string | undefined
  readonly title?: string | undefined
  readonly default?: unknown
  readonly maximum?: number | undefined
  readonly exclusiveMaximum?: boolean | undefined
  readonly minimum?: number | undefined
  readonly exclusiveMinimum?: boolean | undefined
  readonly maxLength?: number | undefined
  readonly minLength?: number | undefined
  readonly pattern?: string | undefined
  readonly maxItems?: number | undefined
  readonly minItems?: number | undefined
  readonly uniqueItems?: boolean | undefined
  readonly multipleOf?: number | undefined
  readonly enum?: ReadonlyArray<unknown> | undefined
  readonly maxProperties?: number | undefined
  readonly minProperties?: number | undefined
  readonly required?: ReadonlyArray<string> | undefined
  readonly items?: JSONSchemaProps | undefined
  readonly allOf?: ReadonlyArray<JSONSchemaProps> | undefined
  readonly oneOf?: ReadonlyArray<JSONSchemaProps> | undefined
  readonly anyOf?: ReadonlyArray<JSONSchemaProps> | undefined
  readonly not?: JSONSchemaProps | undefined
  readonly properties?: Readonly<Record<string, JSONSchemaProps>> | undefined
  /** a schema, or `false` (`true` is the same as absent) */
  readonly additionalProperties?: JSONSchemaProps | boolean | undefined
  readonly nullable?: boolean | undefined
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean | undefined
  readonly "x-kubernetes-embedded-resource"?: boolean | undefined
  readonly "x-kubernetes-int-or-string"?: boolean | undefined
  readonly "x-kubernetes-list-map-keys"?: ReadonlyArray<string> | undefined
  readonly "x-kubernetes-list-type"?: string | undefined
  readonly "x-kubernetes-map-type"?: string | undefined
  readonly "x-kubernetes-validations"?: ReadonlyArray<unknown> | undefined
}

// stored CRDs went through their Go type's decoding, which drops null fields
const opt = <A, I>(s: Schema.Schema<A, I>) => Schema.optional(s)
const str = opt(Schema.String)
const num = opt(Schema.Number)
const bool = opt(Schema.Boolean)
const strings = opt(Schema.Array(Schema.String))

const Props: Schema.Schema<JSONSchemaProps, unknown> = Schema.suspend(() =>
  Schema.Struct({
    type: str,
    format: str,
    description: str,
    title: str,
    default: Schema.optional(Schema.Unknown),
    maximum: num,
    exclusiveMaximum: bool,
    minimum: num,
    exclusiveMinimum: bool,
    maxLength: num,
    minLength: num,
    pattern: str,
    maxItems: num,
    minItems: num,
    uniqueItems: bool,
    multipleOf: num,
    enum: opt(Schema.Array(Schema.Unknown)),
    maxProperties: num,
    minProperties: num,
    required: strings,
    items: opt(Props),
    allOf: opt(Schema.Array(Props)),
    oneOf: opt(Schema.Array(Props)),
    anyOf: opt(Schema.Array(Props)),
    not: opt(Props),
    properties: opt(Schema.Record({ key: Schema.String, value: Props })),
    additionalProperties: opt(Schema.Union(Schema.Boolean, Props)),
    nullable: bool,
    "x-kubernetes-preserve-unknown-fields": bool,
    "x-kubernetes-embedded-resource": bool,
    "x-kubernetes-int-or-string": bool,
    "x-kubernetes-list-map-keys": strings,
    "x-kubernetes-list-type": str,
    "x-kubernetes-map-type": str,
    "x-kubernetes-validations": opt(Schema.Array(Schema.Unknown))
  })
) as unknown as Schema.Schema<JSONSchemaProps, unknown>

const Scale = Schema.Struct({
  specReplicasPath: Schema.optionalWith(Schema.String, { default: () => "" }),
  statusReplicasPath: Schema.optionalWith(Schema.String, { default: () => "" }),
  labelSelectorPath: str
})

const Column = Schema.Struct({
  name: Schema.String,
  type: Schema.String,
  format: str,
  description: str,
  priority: num,
  jsonPath: str
})

const Version = Schema.Struct({
  name: Schema.optionalWith(Schema.String, { default: () => "" }),
  served: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  storage: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  schema: opt(Schema.Struct({ openAPIV3Schema: opt(Props) })),
  subresources: opt(Schema.Struct({ status: opt(Schema.Object), scale: opt(Scale) })),
  additionalPrinterColumns: opt(Schema.Array(Column))
})

const Names = Schema.Struct({
  plural: str,
  singular: str,
  kind: str,
  listKind: str,
  shortNames: strings,
  categories: strings
})

/** The CRD spec as the server reads it. */
export const CrdSpec = Schema.Struct({
  group: str,
  names: opt(Names),
  scope: str,
  versions: opt(Schema.Array(Version)),
  preserveUnknownFields: bool
})
export type CrdSpec = typeof CrdSpec.Type
export type CrdVersion = typeof Version.Type
export type CrdScale = typeof Scale.Type

const decodeSpec = Schema.decodeUnknownEither(CrdSpec)

/** The spec of a CRD object, or the parse error's text (a spec that is not a CRD spec). */
export const crdSpecOf = (crd: Record<string, unknown>): Either.Either<CrdSpec, string> =>
  Either.mapLeft(decodeSpec(crd["spec"] ?? {}), (e) => e.message)

/** The structural schema of a version, if it has one. */
export const versionSchema = (v: CrdVersion): JSONSchemaProps | undefined => v.schema?.openAPIV3Schema ?? undefined
