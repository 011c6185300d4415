/**
 * CreateOptions, UpdateOptions, PatchOptions and DeleteOptions (meta/v1) from the query, or for
 * DELETE from the body (then the query is not read), decoded with effect/Schema and validated as
 * the apiserver does: only `dryRun=All`, fieldValidation Ignore/Warn/Strict (empty means Warn),
 * a printable fieldManager of at most 128 bytes, a known propagationPolicy — each refusal the 422
 * `<Kind>Options.meta.k8s.io "" is invalid: …`.
 */
import { Effect, Either, Schema } from "effect"
import * as F from "../../api/field.js"
import { GoJsonSyntaxError, parseGoJson } from "../../api/go-json.js"
import { decodeProtobuf, PROTOBUF_TYPE } from "../../api/protobuf/envelope.js"
import { BadRequest, type FieldError, newInvalid, type StatusError } from "../../api/status.js"
import { decodeGo, goBool, goInt, goSlice, goString, goStruct, goStructOnly } from "../kinds/go-types.js"
import { parseBool } from "../query.js"

export type FieldValidation = "Strict" | "Warn" | "Ignore"

/** What a create, update or patch was asked to do besides its body. */
export interface WriteOptions {
  readonly dryRun: boolean
  /** after defaulting: "" is Warn */
  readonly fieldValidation: FieldValidation
  readonly fieldManager: string
}

export type Propagation = "Foreground" | "Background" | "Orphan"

export interface DeleteOptions {
  readonly dryRun: boolean
  readonly gracePeriodSeconds?: number | undefined
  readonly preconditions?:
    { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined } | undefined
  readonly propagationPolicy?: Propagation | undefined
  readonly orphanDependents?: boolean | undefined
}

/** The query parameters of the options (what the parameter codec reads). */
const QueryOptions = Schema.Struct({
  dryRun: Schema.Array(Schema.String),
  fieldValidation: Schema.String,
  fieldManager: Schema.String,
  force: Schema.UndefinedOr(Schema.Boolean)
})

const fromQuery = (q: URLSearchParams) =>
  Schema.decodeUnknownSync(QueryOptions)({
    dryRun: q.getAll("dryRun"),
    fieldValidation: q.get("fieldValidation") ?? "",
    fieldManager: q.get("fieldManager") ?? "",
    force: parseBool(q.get("force"))
  })

/** ValidateDryRun */
const dryRunErrors = (dryRun: ReadonlyArray<string>): Array<FieldError> =>
  dryRun.every((v) => v === "All") ? [] : [F.notSupported("dryRun", dryRun, ["All"])]

/** ValidateFieldValidation */
const fieldValidationErrors = (v: string): Array<FieldError> =>
  ["", "Ignore", "Strict", "Warn"].includes(v)
    ? []
    : [F.notSupported("fieldValidation", v, ["", "Ignore", "Strict", "Warn"])]

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space */
export const isPrint = (ch: string): boolean => /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
const fieldManagerErrors = (m: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  if (Buffer.byteLength(m) > 128) errs.push(F.tooLong("fieldManager", 128))
  let pos = 0
  for (const ch of m) {
    const cp = ch.codePointAt(0)!
    if (!isPrint(ch)) {
      errs.push(
        F.invalid(
          "fieldManager",
          m,
          `invalid character U+${cp.toString(16).toUpperCase().padStart(4, "0")} (at position ${pos})`
        )
      )
    }
    pos += Buffer.byteLength(ch)
  }
  return errs
}

const invalidOptions = (kind: string, errs: ReadonlyArray<FieldError>) =>
  newInvalid({ group: "meta.k8s.io", kind }, "", errs)

const writeOptions = (
  kind: "CreateOptions" | "UpdateOptions" | "PatchOptions",
  q: URLSearchParams,
  extra: (o: ReturnType<typeof fromQuery>) => Array<FieldError> = () => []
): Effect.Effect<WriteOptions, StatusError> =>
  Effect.suspend(() => {
    const o = fromQuery(q)
    const errs = [
      ...extra(o),
      ...fieldManagerErrors(o.fieldManager),
      ...dryRunErrors(o.dryRun),
      ...fieldValidationErrors(o.fieldValidation)
    ]
    if (errs.length > 0) return Effect.fail(invalidOptions(kind, errs))
    return Effect.succeed({
      dryRun: o.dryRun.length > 0,
      fieldValidation: (o.fieldValidation === "" ? "Warn" : o.fieldValidation) as FieldValidation,
      fieldManager: o.fieldManager
    })
  })

export const createOptions = (q: URLSearchParams) => writeOptions("CreateOptions", q)
export const updateOptions = (q: URLSearchParams) => writeOptions("UpdateOptions", q)
/** ValidatePatchOptions for a non-apply patch: `force` may not be given. */
export const patchOptions = (q: URLSearchParams) =>
  writeOptions("PatchOptions", q, (o) =>
    o.force !== undefined ? [F.forbidden("force", "may not be specified for non-apply patch")] : []
  )

/** ValidatePatchOptions for an apply patch: a fieldManager is required; `force` may be given. */
export const applyOptions = (
  q: URLSearchParams
): Effect.Effect<WriteOptions & { readonly force: boolean }, StatusError> =>
  Effect.map(
    writeOptions("PatchOptions", q, (o) =>
      o.fieldManager === "" ? [F.required("fieldManager", "is required for apply patch")] : []
    ),
    (w) => ({ ...w, force: parseBool(q.get("force")) === true })
  )

/** meta/v1 DeleteOptions as a Go type (a DELETE body). */
const DeleteOptionsType = goStructOnly("DeleteOptions", "v1.DeleteOptions", {
  kind: goString(),
  apiVersion: goString(),
  gracePeriodSeconds: goInt("int64"),
  preconditions: goStruct("Preconditions", "v1.Preconditions", {
    uid: goString("types.UID"),
    resourceVersion: goString()
  }),
  orphanDependents: goBool,
  propagationPolicy: goString("v1.DeletionPropagation"),
  dryRun: goSlice(goString(), "[]string"),
  ignoreStoreReadErrorWithClusterBreakingPotential: goBool
})

type RawDelete = {
  kind?: string
  gracePeriodSeconds?: number
  preconditions?: { uid?: string; resourceVersion?: string }
  orphanDependents?: boolean
  propagationPolicy?: string
  dryRun?: Array<string>
}

const GVK_ERROR = "couldn't get version/kind; json parse error: "

/** The body's DeleteOptions (the decoder's error as a 400, non-strict), or the query's when the body is empty. */
/** A DeleteOptions body in protobuf (what client-go's typed clients send) as its JSON document. */
const protobufDeleteOptions = (body: Uint8Array): Either.Either<unknown, BadRequest> =>
  Either.mapLeft(
    decodeProtobuf(body, { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions", custom: false }),
    (e) => new BadRequest({ message: e.message })
  )

const rawDeleteOptions = (
  body: Uint8Array,
  q: URLSearchParams,
  contentType: string
): Either.Either<RawDelete, BadRequest> => {
  if (body.length === 0) {
    const grace = q.get("gracePeriodSeconds")
    if (grace !== null && !/^[+-]?[0-9]+$/.test(grace))
      return Either.left(
        new BadRequest({ message: `strconv.ParseInt: parsing ${JSON.stringify(grace)}: invalid syntax` })
      )
    const orphan = parseBool(q.get("orphanDependents"))
    const policy = q.get("propagationPolicy")
    return Either.right({
      dryRun: q.getAll("dryRun"),
      ...(grace === null ? {} : { gracePeriodSeconds: Number(grace) }),
      ...(orphan === undefined ? {} : { orphanDependents: orphan }),
      ...(policy === null ? {} : { propagationPolicy: policy })
    })
  }
  let doc: unknown
  if (contentType === PROTOBUF_TYPE) {
    const decoded = protobufDeleteOptions(body)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    doc = decoded.right
  } else {
    const parsed = parseGoJson(body)
    if (parsed instanceof GoJsonSyntaxError) return Either.left(new BadRequest({ message: GVK_ERROR + parsed.message }))
    doc = parsed.value ?? {}
  }
  if (typeof doc !== "object" || Array.isArray(doc)) {
    return Either.left(
      new BadRequest({
        message: `${GVK_ERROR}json: cannot unmarshal ${Array.isArray(doc) ? "array" : typeof doc === "string" ? "string" : typeof doc === "boolean" ? "bool" : "number"} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`
      })
    )
  }
  const typed = decodeGo(DeleteOptionsType, doc)
  if (Either.isLeft(typed)) return Either.left(new BadRequest({ message: typed.left[0]!.message }))
  const raw = typed.right.value as RawDelete
  if (raw.kind !== undefined && raw.kind !== "" && raw.kind !== "DeleteOptions")
    return Either.left(new BadRequest({ message: "decoded object cannot be converted to DeleteOptions" }))
  return Either.right(raw)
}

/** DeleteOptions of a DELETE or deletecollection, validated (ValidateDeleteOptions). */
export const deleteOptions = (
  body: Uint8Array,
  q: URLSearchParams,
  contentType = "application/json"
): Effect.Effect<DeleteOptions, StatusError> =>
  Effect.suspend((): Effect.Effect<DeleteOptions, StatusError> => {
    const raw = rawDeleteOptions(body, q, contentType)
    if (Either.isLeft(raw)) return Effect.fail(raw.left)
    const o = raw.right
    const errs: Array<FieldError> = []
    if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined)
      errs.push(
        F.invalid(
          "propagationPolicy",
          o.propagationPolicy,
          "orphanDependents and deletionPropagation cannot be both set"
        )
      )
    if (o.propagationPolicy !== undefined && !["Foreground", "Background", "Orphan"].includes(o.propagationPolicy))
      errs.push(F.notSupported("propagationPolicy", o.propagationPolicy, ["Foreground", "Background", "Orphan", "nil"]))
    errs.push(...dryRunErrors(o.dryRun ?? []))
    if (errs.length > 0) return Effect.fail(invalidOptions("DeleteOptions", errs))
    return Effect.succeed({
      dryRun: (o.dryRun ?? []).length > 0,
      gracePeriodSeconds: o.gracePeriodSeconds,
      preconditions: o.preconditions,
      propagationPolicy: o.propagationPolicy as Propagation | undefined,
      orphanDependents: o.orphanDependents
    })
  })
