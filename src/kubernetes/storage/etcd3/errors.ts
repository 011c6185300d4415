/**
 * etcd3/errors.go and the storage errors as the apiserver's registry reports them: etcd's
 * "compacted" becomes 410 Expired with the list/watch wording; storage.StorageError values
 * (key not found, key exists, invalid object) become NotFound / AlreadyExists / Conflict with the
 * registry's messages; anything else is 500 InternalError.
 */
import type { EtcdError } from "../../../errors.js"
import {
  type GroupResource,
  InternalError,
  newConflict,
  newInternalError,
  newResourceExpired,
  type StatusError
} from "../../api/status.js"

export const COMPACTED = "etcdserver: mvcc: required revision has been compacted"
export const FUTURE_REV = "etcdserver: mvcc: required revision is a future revision"

export const LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
export const WATCH_TOO_OLD = "The resourceVersion for the provided watch is too old."
export const CONTINUE_TOO_OLD =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

export const isCompacted = (e: { readonly message: string }): boolean => e.message === COMPACTED
export const isFutureRevision = (e: { readonly message: string }): boolean => e.message === FUTURE_REV

/** An etcd call failed in a way the caller does not interpret: 500 with etcd's message. */
export const fromEtcd = (e: EtcdError): StatusError => newInternalError(e.message)

/** The last path segment of a key: the object's name in messages. */
export const nameOf = (key: string): string => {
  const trimmed = key.endsWith("/") ? key.slice(0, -1) : key
  return trimmed.slice(trimmed.lastIndexOf("/") + 1)
}

/** storage.StorageError's text, as the registry embeds it in Conflict messages. */
const storageErrorText = (code: number, what: string, key: string, rv: bigint, msg: string): string =>
  `StorageError: ${what}, Code: ${code}, Key: ${key}, ResourceVersion: ${rv}, AdditionalErrorMsg: ${msg}`

/** storage.NewInvalidObjError seen through the registry: 409 Conflict. */
export const invalidObj = (gr: GroupResource, key: string, msg: string): StatusError =>
  newConflict(gr, nameOf(key), storageErrorText(4, "invalid object", key, 0n, msg))

export const compactedList = (): StatusError => newResourceExpired(LIST_TOO_OLD)
export const compactedWatch = (): StatusError => newResourceExpired(WATCH_TOO_OLD)

export const isInternal = (e: StatusError): e is InternalError => e._tag === "InternalError"
