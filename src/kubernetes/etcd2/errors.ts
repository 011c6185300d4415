/**
 * etcd v2's errors (etcd/error/error.go, client v2 `Error`): the JSON body of a failed request,
 * decoded with effect/Schema into one tagged error per code the storage interprets (100 key not
 * found, 101 compare failed, 105 node exists, 401 event index cleared) and `V2Error` for the rest.
 * `V2ResponseError` is a response we cannot read (not JSON, not a v2 body, a bad X-Etcd-Index);
 * `V2TransportError` a request that never got a whole answer (worth retrying).
 */
import { Either, Schema } from "effect"

/** error codes (etcd/error/error.go) */
export const ECODE_KEY_NOT_FOUND = 100
/** v2's EcodeTestFailed: a compare-and-swap or compare-and-delete whose condition did not hold. */
export const ECODE_TEST_FAILED = 101
/** v2's EcodeNotFile: the key is a directory. */
export const ECODE_NOT_FILE = 102
/** v2's EcodeNodeExist: a create of a key that exists. */
export const ECODE_NODE_EXIST = 105
/** v2's EcodeEventIndexCleared: a watch from an index older than v2's event history. */
export const ECODE_EVENT_INDEX_CLEARED = 401

/** The body etcd v2 answers an error with. */
export const V2ErrorBody = Schema.Struct({
  errorCode: Schema.Number,
  message: Schema.String,
  cause: Schema.optional(Schema.String),
  index: Schema.Number
})
export type V2ErrorBody = typeof V2ErrorBody.Type

const bodyFields = {
  errorCode: Schema.Number,
  message: Schema.String,
  cause: Schema.String,
  index: Schema.Number
}

/** 100 "Key not found" (index: etcd's index when it answered) */
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", bodyFields) {}
/** 101 "Compare failed": prevIndex / prevValue did not match */
export class CompareFailed extends Schema.TaggedError<CompareFailed>()("CompareFailed", bodyFields) {}
/** 105 "Key already exists": prevExist=false on an existing key */
export class NodeExist extends Schema.TaggedError<NodeExist>()("NodeExist", bodyFields) {}
/** 401 "The event in requested index is outdated and cleared": waitIndex older than the 1000-event history */
export class EventIndexCleared extends Schema.TaggedError<EventIndexCleared>()("EventIndexCleared", bodyFields) {}
/** any other v2 error code */
export class V2Error extends Schema.TaggedError<V2Error>()("V2Error", bodyFields) {}

/** A response that is not what etcd v2 sends (the watch ends on it). */
export class V2ResponseError extends Schema.TaggedError<V2ResponseError>()("V2ResponseError", {
  message: Schema.String,
  status: Schema.Number
}) {}

/** The request failed before a whole response arrived (refused, reset, torn body). */
export class V2TransportError extends Schema.TaggedError<V2TransportError>()("V2TransportError", {
  message: Schema.String
}) {}

/** A v2 error body decoded: one of the codes the storage interprets, or `V2Error`. */
export type V2CodeError = KeyNotFound | CompareFailed | NodeExist | EventIndexCleared | V2Error
/** Every way a keys request fails: a v2 error, an unreadable response, or a transport failure. */
export type KeysError = V2CodeError | V2ResponseError | V2TransportError

/** The typed error of a decoded v2 error body. */
export const fromBody = (b: V2ErrorBody): V2CodeError => {
  const fields = { errorCode: b.errorCode, message: b.message, cause: b.cause ?? "", index: b.index }
  switch (b.errorCode) {
    case ECODE_KEY_NOT_FOUND:
      return new KeyNotFound(fields)
    case ECODE_TEST_FAILED:
      return new CompareFailed(fields)
    case ECODE_NODE_EXIST:
      return new NodeExist(fields)
    case ECODE_EVENT_INDEX_CLEARED:
      return new EventIndexCleared(fields)
    default:
      return new V2Error(fields)
  }
}

const decodeBody = Schema.decodeUnknownEither(V2ErrorBody)

/** The error a parsed JSON body describes, if it is a v2 error body. */
export const errorOfJson = (json: unknown): V2CodeError | undefined => {
  if (typeof json !== "object" || json === null || !("errorCode" in json)) return undefined
  const b = decodeBody(json)
  return Either.isRight(b) ? fromBody(b.right) : undefined
}

export const isCodeError = (e: KeysError): e is V2CodeError =>
  e._tag === "KeyNotFound" ||
  e._tag === "CompareFailed" ||
  e._tag === "NodeExist" ||
  e._tag === "EventIndexCleared" ||
  e._tag === "V2Error"

/** client v2 Error.Error(): `<code>: <message> (<cause>) [<index>]`, the text the apiserver put in a Status. */
export const errorText = (e: KeysError): string =>
  isCodeError(e) ? `${e.errorCode}: ${e.message} (${e.cause}) [${e.index}]` : e.message
