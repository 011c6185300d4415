/**
 * A patched object (or an applied one) through the kind's Go type: a type error, or with
 * fieldValidation=Strict a strict one (unknown or duplicate fields), is the apiserver's 422 on
 * `patch`, showing the patch (a strategic merge patch as Go's %+v of its map).
 */
import { Effect, Either } from "effect"
import * as F from "../../api/field.js"
import { goMarshalSorted, GoJsonSyntaxError, parseGoJson } from "../../api/go-json.js"
import { newInvalid, type StatusError } from "../../api/status.js"
import type { Obj } from "../kinds/strategy.js"
import { strictText, typeCheck, warnStrict } from "../write/decode.js"
import type { FieldValidation } from "../write/options.js"
import type { Warnings } from "../write/warnings.js"
import { type RequestScope, writeContext } from "./scope.js"

export type PatchType = "json" | "merge" | "strategic" | "apply"

/** Go's %+v of a decoded JSON map (what an SMP error prints as the patch). */
const goPrint = (u: unknown): string => {
  if (u === null || u === undefined) return "<nil>"
  if (Array.isArray(u)) return `[${u.map(goPrint).join(" ")}]`
  if (typeof u === "object") {
    const keys = Object.keys(u).sort()
    return `map[${keys.map((k) => `${k}:${goPrint((u as Record<string, unknown>)[k])}`).join(" ")}]`
  }
  return String(u)
}

export interface Patched {
  readonly type: PatchType
  readonly patch: unknown
  /** the patch's own strict violations (duplicate fields, a JSON patch's unknown fields) */
  readonly strict: ReadonlyArray<string>
}

/** The patched object through the kind's Go type: 422 on `patch` for a type error or (Strict) a strict one. */
export const decodePatched = (
  s: RequestScope,
  p: Patched,
  patched: unknown,
  fieldValidation: FieldValidation,
  warnings: Warnings
): Effect.Effect<Obj, StatusError> =>
  Effect.suspend(() => {
    const json = goMarshalSorted(patched)
    const shown = p.type === "strategic" ? goPrint(p.patch) : json
    const invalid = (text: string) =>
      Effect.fail(newInvalid({ group: "", kind: "" }, "", [F.invalid("patch", shown, text)]))
    if (typeof patched !== "object" || patched === null || Array.isArray(patched))
      return invalid(
        `json: cannot unmarshal ${Array.isArray(patched) ? "array" : "string"} into Go value of type map[string]interface {}`
      )
    const doc = parseGoJson(Buffer.from(json)) as Exclude<ReturnType<typeof parseGoJson>, GoJsonSyntaxError>
    const strategy = writeContext(s, false).strategy
    const typed = typeCheck(strategy.schema, { value: doc.value, strict: [], offsets: doc.offsets }, strategy.coerce)
    if (Either.isLeft(typed)) return invalid(typed.left)
    const strict = [...p.strict, ...typed.right.strict]
    if (strict.length > 0 && fieldValidation === "Strict") return invalid(strictText(strict))
    if (strict.length > 0 && fieldValidation === "Warn") warnStrict(warnings, strict)
    return Effect.succeed(typed.right.object)
  })
