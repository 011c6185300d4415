/**
 * storage.PrepareKey and store.prepareKey (etcd3/store.go): a key given to the Storage is checked
 * and turned into its etcd key under the path prefix.
 */
import { Either } from "effect"
import { newInternalError, type StatusError } from "../../api/status.js"

/** storage.PrepareKey + store.prepareKey: validate a key and turn it into the etcd key. */
export const prepareKey = (
  pathPrefix: string,
  resourcePrefix: string,
  key: string,
  recursive: boolean
): Either.Either<string, StatusError> => {
  const q = JSON.stringify(key)
  if (key === ".." || key.startsWith("../") || key.endsWith("/..") || key.includes("/../")) {
    return Either.left(newInternalError(`invalid key: ${q}`))
  }
  if (key === "." || key.startsWith("./") || key.endsWith("/.") || key.includes("/./")) {
    return Either.left(newInternalError(`invalid key: ${q}`))
  }
  if (key === "" || key === "/") return Either.left(newInternalError(`empty key: ${q}`))
  let k = key
  if (recursive && !k.endsWith("/")) k += "/"
  if (!k.startsWith(resourcePrefix)) {
    return Either.left(
      newInternalError(`invalid key: ${JSON.stringify(k)} lacks resource prefix: ${JSON.stringify(resourcePrefix)}`)
    )
  }
  return Either.right(pathPrefix + (k.startsWith("/") ? k.slice(1) : k))
}

/** path.Join("/", prefix) with a trailing "/" */
export const normalizePathPrefix = (prefix: string | undefined): string => {
  const parts = (prefix ?? "/registry").split("/").filter((p) => p !== "" && p !== ".")
  return parts.length === 0 ? "/" : `/${parts.join("/")}/`
}
