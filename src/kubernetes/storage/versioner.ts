/**
 * storage.APIObjectVersioner: resourceVersion strings ↔ revisions. "" and "0" are 0 (unset / any);
 * anything else must be a uint64, else the apiserver's field error.
 */
import { Either } from "effect"
import { type BadRequest, type GroupResource, type Invalid, newBadRequest, newInvalid } from "../api/status.js"

const MAX_UINT64 = (1n << 64n) - 1n

/** ParseResourceVersion's failure text (the field.Invalid error of the apiserver). */
export const invalidResourceVersion = (rv: string, why: "invalid syntax" | "value out of range"): string =>
  `resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${why}`

/** A resourceVersion as a revision ("" and "0" are 0), or the apiserver's error for one that is not a uint64. */
export const parseResourceVersion = (rv: string | undefined): Either.Either<bigint, string> => {
  if (rv === undefined || rv === "" || rv === "0") return Either.right(0n)
  if (!/^[0-9]+$/.test(rv)) return Either.left(invalidResourceVersion(rv, "invalid syntax"))
  const n = BigInt(rv)
  if (n > MAX_UINT64) return Either.left(invalidResourceVersion(rv, "value out of range"))
  return Either.right(n)
}

/** An object's metadata.resourceVersion as a revision (0 when unset). */
export const objectResourceVersion = (rv: string | undefined): Either.Either<bigint, string> => parseResourceVersion(rv)

/**
 * A watch's resourceVersion: the storage's InvalidError as the registry reports it (422,
 * `<resource> "" is invalid: resourceVersion: Invalid value: …`).
 */
export const parseWatchResourceVersion = (rv: string | undefined, gr: GroupResource): Either.Either<bigint, Invalid> =>
  Either.mapLeft(parseResourceVersion(rv), (msg) =>
    newInvalid({ group: gr.group, kind: gr.resource }, "", [
      { type: "FieldValueInvalid", field: "resourceVersion", message: msg.slice("resourceVersion: ".length) }
    ])
  )

/** A list's or get's resourceVersion: 400 `invalid resource version: …` (etcd3/store.go). */
export const parseListResourceVersion = (rv: string | undefined): Either.Either<bigint, BadRequest> =>
  Either.mapLeft(parseResourceVersion(rv), (msg) => newBadRequest(`invalid resource version: ${msg}`))
