/**
 * The Kubernetes half: the apiserver's storage over etcd (storage.Interface, the etcd3 watchChan),
 * the legacy etcd2 watcher, the Cacher, and a Kubernetes-style list/watch HTTP API.
 *
 * @module
 */
export {
  isKubeObject,
  type KubeList,
  KubeObject,
  labelsOf,
  ListMeta,
  ObjectMeta,
  withResourceVersion
} from "./api/object-meta.js"
export {
  AlreadyExists,
  BadRequest,
  Conflict,
  Expired,
  type FieldError,
  fromStatus,
  Gone,
  type GroupResource,
  groupResourceString,
  InternalError,
  Invalid,
  isStatusError,
  isTooLargeResourceVersion,
  MethodNotAllowed,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newGone,
  newInternalError,
  newInvalid,
  newNotFound,
  newResourceExpired,
  newTooLargeResourceVersion,
  newTooManyRequests,
  NotAcceptable,
  NotFound,
  RequestEntityTooLarge,
  ServiceUnavailable,
  Status,
  StatusCause,
  statusCode,
  StatusDetails,
  type StatusError,
  type StatusReason,
  StoreReadError,
  Timeout,
  TooManyRequests,
  toStatus,
  UnsupportedMediaType
} from "./api/status.js"
export {
  added,
  bookmark,
  deleted,
  errorEvent,
  INITIAL_EVENTS_END_ANNOTATION,
  modified,
  type WatchEvent,
  type WatchEventType
} from "./api/watch-event.js"
export { decodeObject, encodeObject } from "./api/codec.js"
export {
  type GetOptions,
  type ListOptions,
  type Preconditions,
  type ResourceVersionMatch,
  type ResponseMeta,
  type Stats,
  Storage,
  type StorageShape,
  type UpdateFunc,
  type UpdateResult,
  type ValidateDeletion,
  type WatchHandle,
  type WatchSink
} from "./storage/interfaces.js"
export {
  type AttrFunc,
  type Attrs,
  defaultAttrs,
  Everything,
  everythingFields,
  everythingLabels,
  type FieldSelector,
  type LabelSelector,
  matches,
  parsePredicate,
  type PredicateQuery,
  selectionPredicate,
  type SelectionPredicate
} from "./storage/selection-predicate.js"
export { watchInto } from "./storage/watch-sink.js"
export * as Value from "./storage/value/index.js"
export { Etcd3Store, type Etcd3StoreConfig } from "./storage/etcd3/store.js"
export { compactStorage, compactWith } from "./storage/etcd3/compact.js"
export { decodeContinue, encodeContinue } from "./storage/continue.js"
export { parseResourceVersion } from "./storage/versioner.js"
export * as Labels from "./api/labels.js"
export * as Fields from "./api/fields.js"
export * as Etcd2 from "./etcd2/index.js"
export { Cacher, type CacherConfigShape, type CacherInternalsShape } from "./cacher/cacher.js"
export * as ApiServer from "./apiserver/index.js"
