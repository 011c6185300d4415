/**
 * core/v1 ConfigMap: its Go type, ValidateConfigMap (metadata, keys, a key in both maps, 1 MiB
 * of values as `[]: Too long`) and ValidateConfigMapUpdate (nothing of an immutable one changes).
 */
import * as F from "../../api/field.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isConfigMapKey, isDNS1123Subdomain } from "../../api/validation.js"
import { goBytes } from "./go-leaves.js"
import { goBool, goMap, goString, goStructOnly } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy, Obj } from "./strategy.js"

/** corev1.MaxSecretSize: the most a ConfigMap's or Secret's values may hold together */
export const MAX_SECRET_SIZE = 1024 * 1024

export const ConfigMap = goStructOnly("ConfigMap", "v1.ConfigMap", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  immutable: goBool,
  data: goMap(goString(), "map[string]string"),
  binaryData: goMap(goBytes, "map[string][]uint8")
})

const rules: MetaRules = { namespaced: true, validateName: isDNS1123Subdomain, core: true }

type Bags = { data?: Record<string, string>; binaryData?: Record<string, string>; immutable?: boolean }

const validateData = (o: Obj): Array<FieldError> => {
  const obj = o as Obj & Bags
  const errs: Array<FieldError> = []
  let total = 0
  const binary = obj.binaryData ?? {}
  for (const [k, v] of Object.entries(obj.data ?? {})) {
    for (const m of isConfigMapKey(k)) errs.push(F.invalid(F.key("data", k), k, m))
    if (k in binary) errs.push(F.invalid(F.key("data", k), k, "duplicate of key present in binaryData"))
    total += Buffer.byteLength(v)
  }
  for (const [k, v] of Object.entries(binary)) {
    for (const m of isConfigMapKey(k)) errs.push(F.invalid(F.key("binaryData", k), k, m))
    total += Buffer.from(v, "base64").length
  }
  if (total > MAX_SECRET_SIZE) errs.push(F.tooLong(F.ROOT, MAX_SECRET_SIZE))
  return errs
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/** The `immutable: true` rule of ConfigMaps and Secrets, for the given data fields. */
export const immutableErrors = (obj: Bags, old: Bags, fields: ReadonlyArray<"data" | "binaryData">) => {
  const errs: Array<FieldError> = []
  if (old.immutable !== true) return errs
  const msg = "field is immutable when `immutable` is set"
  if (obj.immutable !== true) errs.push(F.forbidden("immutable", msg))
  for (const f of fields) if (!same(obj[f], old[f])) errs.push(F.forbidden(f, msg))
  return errs
}

export const configMapStrategy: KindStrategy = {
  schema: ConfigMap,
  core: true,
  returnDeletedObject: false,
  validate: (obj) => [...validateObjectMeta(obj.metadata, rules), ...validateData(obj)],
  validateUpdate: (obj, old: KubeObject) => [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules),
    ...immutableErrors(obj as Bags, old as Bags, ["data", "binaryData"]),
    ...validateObjectMeta(obj.metadata, rules),
    ...validateData(obj)
  ]
}
