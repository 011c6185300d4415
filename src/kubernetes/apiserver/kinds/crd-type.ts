/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition as a Go type: the spec (names, scope,
 * versions with their OpenAPI v3 schema as JSONSchemaProps, subresources, printer columns,
 * conversion) and status. Fields inside `items`, `additionalProperties`, `additionalItems` and
 * `dependencies` are the JSONSchemaPropsOr* types, whose own decoders do not report unknown
 * fields; they are taken as JSON here.
 */
import { Schema } from "effect"
import { goTime } from "./go-leaves.js"
import {
  goBool,
  goFloat64,
  goInt,
  goJson,
  goMap,
  type GoSchema,
  goSlice,
  goString,
  goStruct,
  goStructOnly
} from "./go-types.js"
import { ObjectMeta } from "./object-meta.js"

const strings = goSlice(goString(), "[]string")

const JSONSchemaProps: GoSchema = Schema.suspend((): GoSchema =>
  goStruct("JSONSchemaProps", "v1.JSONSchemaProps", {
    id: goString(),
    $schema: goString("v1.JSONSchemaURL"),
    $ref: goString(),
    description: goString(),
    type: goString(),
    format: goString(),
    title: goString(),
    default: goJson,
    maximum: goFloat64,
    exclusiveMaximum: goBool,
    minimum: goFloat64,
    exclusiveMinimum: goBool,
    maxLength: goInt("int64"),
    minLength: goInt("int64"),
    pattern: goString(),
    maxItems: goInt("int64"),
    minItems: goInt("int64"),
    uniqueItems: goBool,
    multipleOf: goFloat64,
    enum: goSlice(goJson, "[]v1.JSON"),
    maxProperties: goInt("int64"),
    minProperties: goInt("int64"),
    required: strings,
    items: goJson,
    allOf: goSlice(JSONSchemaProps, "[]v1.JSONSchemaProps"),
    oneOf: goSlice(JSONSchemaProps, "[]v1.JSONSchemaProps"),
    anyOf: goSlice(JSONSchemaProps, "[]v1.JSONSchemaProps"),
    not: JSONSchemaProps,
    properties: goMap(JSONSchemaProps, "map[string]v1.JSONSchemaProps"),
    additionalProperties: goJson,
    patternProperties: goMap(JSONSchemaProps, "map[string]v1.JSONSchemaProps"),
    dependencies: goJson,
    additionalItems: goJson,
    definitions: goMap(JSONSchemaProps, "v1.JSONSchemaDefinitions"),
    externalDocs: goStruct("ExternalDocumentation", "v1.ExternalDocumentation", {
      description: goString(),
      url: goString()
    }),
    example: goJson,
    nullable: goBool,
    "x-kubernetes-preserve-unknown-fields": goBool,
    "x-kubernetes-embedded-resource": goBool,
    "x-kubernetes-int-or-string": goBool,
    "x-kubernetes-list-map-keys": strings,
    "x-kubernetes-list-type": goString(),
    "x-kubernetes-map-type": goString(),
    "x-kubernetes-validations": goSlice(
      goStruct("ValidationRule", "v1.ValidationRule", {
        rule: goString(),
        message: goString(),
        messageExpression: goString(),
        reason: goString("v1.FieldValueErrorReason"),
        fieldPath: goString(),
        optionalOldSelf: goBool
      }),
      "v1.ValidationRules"
    )
  })
)

const Names = goStruct("CustomResourceDefinitionNames", "v1.CustomResourceDefinitionNames", {
  plural: goString(),
  singular: goString(),
  shortNames: strings,
  kind: goString(),
  listKind: goString(),
  categories: strings
})

const Version = goStruct("CustomResourceDefinitionVersion", "v1.CustomResourceDefinitionVersion", {
  name: goString(),
  served: goBool,
  storage: goBool,
  deprecated: goBool,
  deprecationWarning: goString(),
  schema: goStruct("CustomResourceValidation", "v1.CustomResourceValidation", { openAPIV3Schema: JSONSchemaProps }),
  subresources: goStruct("CustomResourceSubresources", "v1.CustomResourceSubresources", {
    status: goStruct("CustomResourceSubresourceStatus", "v1.CustomResourceSubresourceStatus", {}),
    scale: goStruct("CustomResourceSubresourceScale", "v1.CustomResourceSubresourceScale", {
      specReplicasPath: goString(),
      statusReplicasPath: goString(),
      labelSelectorPath: goString()
    })
  }),
  additionalPrinterColumns: goSlice(
    goStruct("CustomResourceColumnDefinition", "v1.CustomResourceColumnDefinition", {
      name: goString(),
      type: goString(),
      format: goString(),
      description: goString(),
      priority: goInt("int32"),
      jsonPath: goString()
    }),
    "[]v1.CustomResourceColumnDefinition"
  ),
  selectableFields: goSlice(
    goStruct("SelectableField", "v1.SelectableField", { jsonPath: goString() }),
    "[]v1.SelectableField"
  )
})

const Conversion = goStruct("CustomResourceConversion", "v1.CustomResourceConversion", {
  strategy: goString("v1.ConversionStrategyType"),
  webhook: goStruct("WebhookConversion", "v1.WebhookConversion", {
    clientConfig: goStruct("WebhookClientConfig", "v1.WebhookClientConfig", {
      url: goString(),
      service: goStruct("ServiceReference", "v1.ServiceReference", {
        namespace: goString(),
        name: goString(),
        path: goString(),
        port: goInt("int32")
      }),
      caBundle: goJson
    }),
    conversionReviewVersions: strings
  })
})

export const CustomResourceDefinition = goStructOnly("CustomResourceDefinition", "v1.CustomResourceDefinition", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  spec: goStruct("CustomResourceDefinitionSpec", "v1.CustomResourceDefinitionSpec", {
    group: goString(),
    names: Names,
    scope: goString("v1.ResourceScope"),
    versions: goSlice(Version, "[]v1.CustomResourceDefinitionVersion"),
    conversion: Conversion,
    preserveUnknownFields: goBool
  }),
  status: goStruct("CustomResourceDefinitionStatus", "v1.CustomResourceDefinitionStatus", {
    conditions: goSlice(
      goStruct("CustomResourceDefinitionCondition", "v1.CustomResourceDefinitionCondition", {
        type: goString("v1.CustomResourceDefinitionConditionType"),
        status: goString("v1.ConditionStatus"),
        lastTransitionTime: goTime,
        reason: goString(),
        message: goString()
      }),
      "[]v1.CustomResourceDefinitionCondition"
    ),
    acceptedNames: Names,
    storedVersions: strings
  })
})
