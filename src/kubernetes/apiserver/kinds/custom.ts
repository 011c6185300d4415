/**
 * A custom resource's strategy while CRDs have no structural schema here (issue 27 adds the
 * schema's validation, defaulting and pruning as pipeline stages): the body is any JSON object
 * whose `metadata` is an ObjectMeta (typed, so its unknown or mistyped fields are refused as
 * for any kind), the rest kept as sent.
 */
import { Schema } from "effect"
import { isDNS1123Subdomain } from "../../api/validation.js"
import { goString, GoStructId, GoTypeId } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy } from "./strategy.js"

/** An unstructured object: apiVersion/kind strings, a typed metadata, anything else. */
export const Unstructured = Schema.Struct(
  { apiVersion: Schema.optional(goString()), kind: Schema.optional(goString()), metadata: Schema.optional(ObjectMeta) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ [GoTypeId]: "unstructured.Unstructured", [GoStructId]: "Unstructured" })

export const customResourceStrategy = (namespaced: boolean): KindStrategy => {
  const rules: MetaRules = { namespaced, validateName: isDNS1123Subdomain, core: false }
  return {
    schema: Unstructured,
    core: false,
    returnDeletedObject: false,
    validate: (obj) => validateObjectMeta(obj.metadata, rules),
    validateUpdate: (obj, old) => validateObjectMetaUpdate(obj.metadata, old.metadata, rules)
  }
}
