/**
 * metav1.Status and apimachinery's api/errors: every error of the Kubernetes layers is one of the
 * tagged errors below, each mapping 1:1 to a Status (code, reason, message, details) with the
 * apiserver's wording. `toStatus` gives the wire shape for HTTP bodies and watch ERROR events.
 */
import { Schema } from "effect"

/** metav1.StatusCause: its Go field Type is `reason` on the wire. */
export const StatusCause = Schema.Struct({
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  field: Schema.optional(Schema.String)
})
export type StatusCause = typeof StatusCause.Type

/** metav1.StatusDetails: the object an error is about (name, group, kind, uid), its causes and retry-after. */
export const StatusDetails = Schema.Struct({
  name: Schema.optional(Schema.String),
  group: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  uid: Schema.optional(Schema.String),
  causes: Schema.optional(Schema.Array(StatusCause)),
  retryAfterSeconds: Schema.optional(Schema.Number)
})
/** metav1.StatusDetails as a value. */
export type StatusDetails = typeof StatusDetails.Type

/** metav1.Status: the body of an API error and of a watch's ERROR event. */
export const Status = Schema.Struct({
  kind: Schema.Literal("Status"),
  apiVersion: Schema.Literal("v1"),
  metadata: Schema.Struct({
    resourceVersion: Schema.optional(Schema.String),
    continue: Schema.optional(Schema.String)
  }),
  status: Schema.Literal("Success", "Failure"),
  message: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  details: Schema.optional(StatusDetails),
  code: Schema.Number
})
/** metav1.Status as a value. */
export type Status = typeof Status.Type

/** The StatusReason values used here (metav1.StatusReason*). */
export type StatusReason =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Expired"
  | "Gone"
  | "BadRequest"
  | "Invalid"
  | "InternalError"
  | "TooManyRequests"
  | "Timeout"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "UnsupportedMediaType"
  | "RequestEntityTooLarge"
  | "Forbidden"
  | "ServiceUnavailable"
  | "StoreReadError"

const fields = {
  message: Schema.String,
  details: Schema.optional(StatusDetails),
  /** the list's fresh continue token (410 on a compacted continue) */
  continueToken: Schema.optional(Schema.String)
}

/** 404 NotFound: `<resource> "<name>" not found`. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
/** 409 AlreadyExists: `<resource> "<name>" already exists`. */
export class AlreadyExists extends Schema.TaggedError<AlreadyExists>()("AlreadyExists", fields) {}
/** 409 Conflict: `Operation cannot be fulfilled on <resource> "<name>": <why>`. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {}
/** 410 Expired (NewResourceExpired): a compacted resourceVersion or continue token. */
export class Expired extends Schema.TaggedError<Expired>()("Expired", fields) {}
/** 410 Gone (NewGone). */
export class Gone extends Schema.TaggedError<Gone>()("Gone", fields) {}
/** 400 BadRequest. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields) {}
/** 422 Invalid: field validation failed (details.causes say which). */
export class Invalid extends Schema.TaggedError<Invalid>()("Invalid", fields) {}
/** 500 InternalError: `Internal error occurred: <err>`. */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {}
/** 500 StoreReadError: stored data that does not decode or decrypt (one object, never a crash). */
export class StoreReadError extends Schema.TaggedError<StoreReadError>()("StoreReadError", fields) {}
/** 429 TooManyRequests (details.retryAfterSeconds). */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", fields) {}
/** 504 Timeout; with cause ResourceVersionTooLarge it is the "Too large resource version" error. */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", fields) {}
/** 503 ServiceUnavailable (etcd unreachable). */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields) {}
/** 403 Forbidden: `<resource> "<name>" is forbidden: <why>` (admission's refusals). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {}
/** 405 MethodNotAllowed: a verb the resource does not support. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields) {}
/** 406 NotAcceptable: no media type of the Accept header can be served. */
export class NotAcceptable extends Schema.TaggedError<NotAcceptable>()("NotAcceptable", fields) {}
/** 413 RequestEntityTooLarge: a request body above the apiserver's limit (3 MiB). */
export class RequestEntityTooLarge extends Schema.TaggedError<RequestEntityTooLarge>()(
  "RequestEntityTooLarge",
  fields
) {}
/** 415 UnsupportedMediaType: a body (e.g. a patch) of a content type the endpoint does not take. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields) {}

/** Every error of the Kubernetes layers: each maps to one Status code and reason. */
export type StatusError =
  | NotFound
  | AlreadyExists
  | Conflict
  | Expired
  | Gone
  | BadRequest
  | Invalid
  | Forbidden
  | InternalError
  | StoreReadError
  | TooManyRequests
  | Timeout
  | ServiceUnavailable
  | MethodNotAllowed
  | NotAcceptable
  | RequestEntityTooLarge
  | UnsupportedMediaType

const codes: Record<StatusError["_tag"], number> = {
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Expired: 410,
  Gone: 410,
  BadRequest: 400,
  Invalid: 422,
  Forbidden: 403,
  InternalError: 500,
  StoreReadError: 500,
  TooManyRequests: 429,
  Timeout: 504,
  ServiceUnavailable: 503,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415
}

/** Whether `u` is one of the `StatusError`s. */
export const isStatusError = (u: unknown): u is StatusError =>
  typeof u === "object" &&
  u !== null &&
  "_tag" in u &&
  typeof (u as { _tag: unknown })._tag === "string" &&
  (u as { _tag: string })._tag in codes

/** The HTTP status code of an error (NotFound 404, Conflict 409, Expired 410, …). */
export const statusCode = (e: StatusError): number => codes[e._tag]

/** The metav1.Status of an error (`reason` is the tag; BadRequest keeps its reason). */
export const toStatus = (e: StatusError): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: e.continueToken === undefined ? {} : { continue: e.continueToken },
  status: "Failure",
  message: e.message,
  reason: e._tag,
  ...(e.details === undefined ? {} : { details: e.details }),
  code: codes[e._tag]
})

/** The error back from a Status (what a client sees in a watch ERROR event). */
export const fromStatus = (s: Status): StatusError => {
  const make = { message: s.message ?? "", details: s.details, continueToken: s.metadata.continue }
  switch (s.reason) {
    case "NotFound":
      return new NotFound(make)
    case "AlreadyExists":
      return new AlreadyExists(make)
    case "Conflict":
      return new Conflict(make)
    case "Expired":
      return new Expired(make)
    case "Gone":
      return new Gone(make)
    case "BadRequest":
      return new BadRequest(make)
    case "Invalid":
      return new Invalid(make)
    case "Forbidden":
      return new Forbidden(make)
    case "StoreReadError":
      return new StoreReadError(make)
    case "TooManyRequests":
      return new TooManyRequests(make)
    case "Timeout":
      return new Timeout(make)
    case "ServiceUnavailable":
      return new ServiceUnavailable(make)
    case "MethodNotAllowed":
      return new MethodNotAllowed(make)
    case "NotAcceptable":
      return new NotAcceptable(make)
    case "RequestEntityTooLarge":
      return new RequestEntityTooLarge(make)
    case "UnsupportedMediaType":
      return new UnsupportedMediaType(make)
    default:
      return new InternalError(make)
  }
}

// ---- constructors with the apiserver's messages (apimachinery pkg/api/errors) ----

/** `schema.GroupResource`: resource "pods" in group "" (core), or "widgets" in "example.com". */
export interface GroupResource {
  readonly group: string
  readonly resource: string
}

/** A GroupResource as the apiserver prints it: `pods`, or `widgets.example.com`. */
export const groupResourceString = (gr: GroupResource): string =>
  gr.group === "" ? gr.resource : `${gr.resource}.${gr.group}`

const detailsOf = (gr: GroupResource, name: string): StatusDetails =>
  gr.group === "" ? { name, kind: gr.resource } : { name, group: gr.group, kind: gr.resource }

/** errors.NewNotFound: `<resource> "<name>" not found` (404). */
export const newNotFound = (gr: GroupResource, name: string): NotFound =>
  new NotFound({ message: `${groupResourceString(gr)} "${name}" not found`, details: detailsOf(gr, name) })

/** errors.NewAlreadyExists: `<resource> "<name>" already exists` (409). */
export const newAlreadyExists = (gr: GroupResource, name: string): AlreadyExists =>
  new AlreadyExists({ message: `${groupResourceString(gr)} "${name}" already exists`, details: detailsOf(gr, name) })

/** errors.NewConflict: `Operation cannot be fulfilled on <resource> "<name>": <why>` (409). */
export const newConflict = (gr: GroupResource, name: string, why: string): Conflict =>
  new Conflict({
    message: `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": ${why}`,
    details: detailsOf(gr, name)
  })

/** errors.NewResourceExpired: 410 Expired, with a fresh continue token when there is one. */
export const newResourceExpired = (message: string, continueToken?: string): Expired =>
  new Expired(continueToken === undefined ? { message } : { message, continueToken })

/** errors.NewGone: 410 Gone (a watch's resource version is too old). */
export const newGone = (message: string): Gone => new Gone({ message })

/** errors.NewBadRequest: 400 BadRequest. */
export const newBadRequest = (message: string): BadRequest => new BadRequest({ message })

/** errors.NewInternalError: `Internal error occurred: <err>` (500). */
export const newInternalError = (err: string): InternalError =>
  new InternalError({ message: `Internal error occurred: ${err}`, details: { causes: [{ message: err }] } })

/** errors.NewTooManyRequests: 429, with the seconds to wait before retrying. */
export const newTooManyRequests = (message: string, retryAfterSeconds: number): TooManyRequests =>
  new TooManyRequests({ message, details: { retryAfterSeconds } })

/** storage.NewTooLargeResourceVersionError: 504 Timeout, cause ResourceVersionTooLarge. */
export const newTooLargeResourceVersion = (rv: bigint, current: bigint, retrySeconds: number): Timeout =>
  new Timeout({
    message: `Timeout: Too large resource version: ${rv}, current: ${current}`,
    details: {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: retrySeconds
    }
  })

/** Whether `e` is storage's too-large-resource-version error (504, cause ResourceVersionTooLarge). */
export const isTooLargeResourceVersion = (e: StatusError): boolean =>
  e._tag === "Timeout" && (e.details?.causes ?? []).some((c) => c.reason === "ResourceVersionTooLarge")

/** One field error of an Invalid status (field.Error): its type (the cause's reason), path and body. */
export interface FieldError {
  readonly type:
    | "FieldValueInvalid"
    | "FieldValueTypeInvalid"
    | "FieldValueRequired"
    | "FieldValueNotSupported"
    | "FieldValueForbidden"
    | "FieldValueDuplicate"
    | "FieldValueTooLong"
    | "FieldValueTooMany"
    | "FieldValueNotFound"
    | "InternalError"
  readonly field: string
  /** ErrorBody(): `Invalid value: "x": detail` (the text after `<field>: `) */
  readonly message: string
}

/** field.Error.Error(): `<field>: <body>`. */
export const fieldErrorText = (e: FieldError): string => `${e.field}: ${e.message}`

/**
 * NewInvalid(qualifiedKind, name, errs): `<Kind>.<group> "<name>" is invalid: <errs>`, one error
 * as itself, several as `[e1, e2]` with repeated texts once (utilerrors.NewAggregate).
 */
export const newInvalid = (
  kind: { group: string; kind: string },
  name: string,
  errors: ReadonlyArray<FieldError>
): Invalid => {
  const qualified =
    kind.kind === "" && kind.group === "" ? "" : kind.group === "" ? kind.kind : `${kind.kind}.${kind.group}`
  const seen = new Set<string>()
  const list: Array<string> = []
  for (const e of errors) {
    const t = fieldErrorText(e)
    if (seen.has(t)) continue
    seen.add(t)
    list.push(t)
  }
  const joined = list.length === 1 ? list[0]! : `[${list.join(", ")}]`
  return new Invalid({
    message: list.length === 0 ? `${qualified} "${name}" is invalid` : `${qualified} "${name}" is invalid: ${joined}`,
    details: {
      name,
      ...(kind.group === "" ? {} : { group: kind.group }),
      ...(kind.kind === "" ? {} : { kind: kind.kind }),
      causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field }))
    }
  })
}

/** NewForbidden(resource, name, err): 403 `<resource> "<name>" is forbidden: <why>`. */
export const newForbidden = (
  gr: GroupResource,
  name: string,
  why: string,
  causes?: ReadonlyArray<StatusCause>
): Forbidden =>
  new Forbidden({
    message: `${groupResourceString(gr)} "${name}" is forbidden: ${why}`,
    details: { ...detailsOf(gr, name), ...(causes === undefined ? {} : { causes }) }
  })
