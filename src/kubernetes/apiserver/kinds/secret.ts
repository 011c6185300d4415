/**
 * core/v1 Secret: its Go type; the conversion that folds `stringData` into base64 `data` (the key
 * in stringData wins) and never stores it; `type` defaulted to Opaque; ValidateSecret (metadata,
 * keys, 1 MiB of values as `data: Too long`, each type's required keys) and ValidateSecretUpdate
 * (`type` immutable; nothing of an immutable one changes).
 */
import * as F from "../../api/field.js"
import { goJsonError } from "../../api/go-json.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isConfigMapKey, isDNS1123Subdomain } from "../../api/validation.js"
import { immutableErrors, MAX_SECRET_SIZE } from "./configmap.js"
import { goBytes } from "./go-leaves.js"
import { goBool, goMap, goString, goStructOnly } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy, Obj } from "./strategy.js"

export const Secret = goStructOnly("Secret", "v1.Secret", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  immutable: goBool,
  data: goMap(goBytes, "map[string][]uint8"),
  stringData: goMap(goString(), "map[string]string"),
  type: goString("v1.SecretType")
})

const rules: MetaRules = { namespaced: true, validateName: isDNS1123Subdomain, core: true }

type SecretBody = Obj & {
  data?: Record<string, string>
  stringData?: Record<string, string>
  type?: string
  immutable?: boolean
}

/** Convert_v1_Secret_To_core_Secret's stringData merge, then SetDefaults_Secret. */
const defaults = (obj: Obj): void => {
  const s = obj as SecretBody
  if (s.stringData !== undefined) {
    const data = { ...(s.data ?? {}) }
    for (const [k, v] of Object.entries(s.stringData)) data[k] = Buffer.from(v, "utf8").toString("base64")
    s.data = data
    delete s.stringData
  }
  if (s.type === undefined || s.type === "") s.type = "Opaque"
}

const bytesOf = (b64: string | undefined) => (b64 === undefined ? undefined : Buffer.from(b64, "base64"))

const requiredKeys = (s: SecretBody): Array<FieldError> => {
  const data = s.data ?? {}
  const has = (k: string) => k in data
  const need = (k: string) => F.required(F.key("data", k))
  switch (s.type) {
    case "kubernetes.io/service-account-token":
      return (s.metadata.annotations?.["kubernetes.io/service-account.name"] ?? "") === ""
        ? [F.required(F.key("metadata.annotations", "kubernetes.io/service-account.name"))]
        : []
    case "kubernetes.io/dockercfg":
    case "kubernetes.io/dockerconfigjson": {
      const k = s.type === "kubernetes.io/dockercfg" ? ".dockercfg" : ".dockerconfigjson"
      if (!has(k)) return [need(k)]
      const err = goJsonError(bytesOf(data[k])!)
      if (err !== undefined) return [F.invalid(F.key("data", k), "<secret contents redacted>", err)]
      const parsed = JSON.parse(bytesOf(data[k])!.toString("utf8")) as unknown
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        const kind = Array.isArray(parsed)
          ? "array"
          : parsed === null
            ? "null"
            : typeof parsed === "string"
              ? "string"
              : typeof parsed === "boolean"
                ? "bool"
                : "number"
        if (kind !== "null")
          return [
            F.invalid(
              F.key("data", k),
              "<secret contents redacted>",
              `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`
            )
          ]
      }
      return []
    }
    case "kubernetes.io/basic-auth":
      return !has("username") && !has("password") ? [need("username"), need("password")] : []
    case "kubernetes.io/ssh-auth":
      return (bytesOf(data["ssh-privatekey"])?.length ?? 0) === 0 ? [need("ssh-privatekey")] : []
    case "kubernetes.io/tls":
      return [...(has("tls.crt") ? [] : [need("tls.crt")]), ...(has("tls.key") ? [] : [need("tls.key")])]
    default:
      return []
  }
}

const validateSecret = (obj: Obj): Array<FieldError> => {
  const s = obj as SecretBody
  const errs = validateObjectMeta(s.metadata, rules)
  let total = 0
  for (const [k, v] of Object.entries(s.data ?? {})) {
    for (const m of isConfigMapKey(k)) errs.push(F.invalid(F.key("data", k), k, m))
    total += bytesOf(v)!.length
  }
  if (total > MAX_SECRET_SIZE) errs.push(F.tooLong("data", MAX_SECRET_SIZE))
  return [...errs, ...requiredKeys(s)]
}

export const secretStrategy: KindStrategy = {
  schema: Secret,
  core: true,
  returnDeletedObject: false,
  defaults,
  validate: validateSecret,
  validateUpdate: (obj, old: KubeObject) => {
    const s = obj as SecretBody
    const o = old as unknown as SecretBody
    const errs = validateObjectMetaUpdate(s.metadata, o.metadata, rules)
    if ((s.type ?? "") !== (o.type ?? "")) errs.push(F.invalid("type", s.type ?? "", "field is immutable"))
    return [...errs, ...immutableErrors(s, o, ["data"]), ...validateSecret(obj)]
  }
}
