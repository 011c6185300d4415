/**
 * storage.APIObjectVersioner: resourceVersion strings ↔ revisions. "" and "0" are 0 (unset / any);
 * anything else must be a uint64, else the apiserver's field error.
 */
import { Either } from "effect"

const MAX_UINT64 = (1n << 64n) - 1n

/** ParseResourceVersion's failure text (the field.Invalid error of the apiserver). */
export const invalidResourceVersion = (rv: string, why: "invalid syntax" | "value out of range"): string =>
  `resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${why}`

export const parseResourceVersion = (rv: string | undefined): Either.Either<bigint, string> => {
  if (rv === undefined || rv === "" || rv === "0") return Either.right(0n)
  if (!/^[0-9]+$/.test(rv)) return Either.left(invalidResourceVersion(rv, "invalid syntax"))
  const n = BigInt(rv)
  if (n > MAX_UINT64) return Either.left(invalidResourceVersion(rv, "value out of range"))
  return Either.right(n)
}

/** An object's metadata.resourceVersion as a revision (0 when unset). */
export const objectResourceVersion = (rv: string | undefined): Either.Either<bigint, string> => parseResourceVersion(rv)
