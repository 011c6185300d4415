/**
 * metav1.ListOptions from a query string (runtime/conversion.go's parameter codec), the WatchList
 * defaulting of 1.34 (internalversion/defaults.go SetListOptionsDefaults) and the 422 validation
 * (internalversion/validation ValidateListOptions), with the apiserver's messages.
 */
import { Either } from "effect"
import { type BadRequest, type FieldError, type Invalid, newBadRequest, newInvalid } from "../api/status.js"

/** runtime.Convert_Slice_string_To_bool: "0"/"false" (any case) are false, anything else (even "") true. */
export const parseBool = (v: string | null): boolean | undefined => {
  if (v === null) return undefined
  const l = v.toLowerCase()
  return !(l === "0" || l === "false")
}

export interface ListQuery {
  readonly watch: boolean
  readonly labelSelector: string
  readonly fieldSelector: string
  readonly resourceVersion: string
  readonly resourceVersionMatch: string
  readonly allowWatchBookmarks: boolean
  readonly sendInitialEvents: boolean | undefined
  readonly timeoutSeconds: number | undefined
  readonly limit: number
  readonly continue: string
}

/** strconv.ParseInt's message, as the parameter codec reports it (400). */
const parseInt64 = (name: string, v: string | null): Either.Either<number | undefined, BadRequest> => {
  if (v === null) return Either.right(undefined)
  if (!/^[+-]?[0-9]+$/.test(v))
    return Either.left(newBadRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`))
  const n = Number(v)
  if (!Number.isSafeInteger(n))
    return Either.left(newBadRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`))
  void name
  return Either.right(n)
}

/** The decoded options (400 for a number that does not parse). */
export const decodeListQuery = (q: URLSearchParams, watchFromPath: boolean): Either.Either<ListQuery, BadRequest> => {
  const limit = parseInt64("limit", q.get("limit"))
  if (Either.isLeft(limit)) return Either.left(limit.left)
  const timeout = parseInt64("timeoutSeconds", q.get("timeoutSeconds"))
  if (Either.isLeft(timeout)) return Either.left(timeout.left)
  return Either.right({
    watch: watchFromPath || parseBool(q.get("watch")) === true,
    labelSelector: q.get("labelSelector") ?? "",
    fieldSelector: q.get("fieldSelector") ?? "",
    resourceVersion: q.get("resourceVersion") ?? "",
    resourceVersionMatch: q.get("resourceVersionMatch") ?? "",
    allowWatchBookmarks: parseBool(q.get("allowWatchBookmarks")) === true,
    sendInitialEvents: parseBool(q.get("sendInitialEvents")),
    timeoutSeconds: timeout.right,
    limit: limit.right ?? 0,
    continue: q.get("continue") ?? ""
  })
}

/** SetListOptionsDefaults with WatchList on (beta, default since 1.34): an RV ""/"0" watch is a watch-list. */
export const withWatchListDefaults = (o: ListQuery): ListQuery => {
  if (!o.watch || o.sendInitialEvents !== undefined || o.resourceVersionMatch !== "") return o
  if (o.resourceVersion !== "" && o.resourceVersion !== "0") return o
  return { ...o, sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" }
}

const forbidden = (field: string, detail: string): FieldError => ({
  type: "FieldValueForbidden",
  field,
  message: `Forbidden: ${detail}`
})
const notSupported = (field: string, value: string, supported: ReadonlyArray<string>): FieldError => ({
  type: "FieldValueNotSupported",
  field,
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}`
})

/** ValidateListOptions: 422 `ListOptions.meta.k8s.io "" is invalid: …`. */
export const validateListQuery = (o: ListQuery): Either.Either<ListQuery, Invalid> => {
  const errs: Array<FieldError> = []
  const match = o.resourceVersionMatch
  if (o.watch) {
    if (o.sendInitialEvents !== undefined && match !== "NotOlderThan") {
      errs.push(
        forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
      )
    }
    if (match !== "") {
      if (o.sendInitialEvents === undefined) {
        errs.push(
          forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
          )
        )
      }
      if (match !== "NotOlderThan") errs.push(notSupported("resourceVersionMatch", match, ["NotOlderThan"]))
      if (o.continue !== "")
        errs.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    }
  } else {
    if (match !== "") {
      if (o.resourceVersion === "") {
        errs.push(
          forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
        )
      }
      if (o.continue !== "")
        errs.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
      if (match !== "Exact" && match !== "NotOlderThan") {
        errs.push(notSupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
      }
      if (match === "Exact" && o.resourceVersion === "0") {
        errs.push(
          forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
        )
      }
    }
    if (o.sendInitialEvents !== undefined)
      errs.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
  }
  if (errs.length > 0) return Either.left(newInvalid({ group: "meta.k8s.io", kind: "ListOptions" }, "", errs))
  return Either.right(o)
}

/** decode → default → validate, as get.go's ListResource does. */
export const listQuery = (q: URLSearchParams, watchFromPath: boolean): Either.Either<ListQuery, BadRequest | Invalid> =>
  Either.flatMap(decodeListQuery(q, watchFromPath), (o) => validateListQuery(withWatchListDefaults(o)))
