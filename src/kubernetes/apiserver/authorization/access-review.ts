/**
 * The review resources, create-only and never stored (kube-apiserver's pkg/registry/authorization
 * and authentication/selfsubjectreview): authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl
 * auth can-i`), SelfSubjectRulesReview (`kubectl auth can-i --list`), SubjectAccessReview and
 * LocalSubjectAccessReview, and authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`).
 * Each is answered as the configured authorizer and authenticator decide (authorizer.ts): the
 * request's body comes back with its status filled in, 201, in JSON, YAML or protobuf (kubectl's
 * typed client sends and asks for protobuf).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, ParseResult, Schema } from "effect"
import { invalid } from "../../api/field.js"
import { encodeProtobuf } from "../../api/protobuf/envelope.js"
import { type FieldError, MethodNotAllowed, newBadRequest, newInvalid, type StatusError } from "../../api/status.js"
import { readBody } from "../body.js"
import { jsonToYaml, negotiateOutput, YAML_TYPE } from "../negotiation.js"
import type { ResourceRequest } from "../request-info.js"
import { json, notFoundResource, protobuf } from "../response.js"
import { decoderFor } from "../write/decode.js"
import { alwaysAllow, ANONYMOUS, type Authorizer, type UserInfo } from "./authorizer.js"

/** One review resource as discovery lists it. */
export interface ReviewResource {
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly singular: string
  readonly kind: string
  readonly namespaced: boolean
}

const authz = (plural: string, kind: string, namespaced = false): ReviewResource => ({
  group: "authorization.k8s.io",
  version: "v1",
  plural,
  singular: plural.slice(0, -1),
  kind,
  namespaced
})

export const REVIEW_RESOURCES: ReadonlyArray<ReviewResource> = [
  {
    group: "authentication.k8s.io",
    version: "v1",
    plural: "selfsubjectreviews",
    singular: "selfsubjectreview",
    kind: "SelfSubjectReview",
    namespaced: false
  },
  authz("localsubjectaccessreviews", "LocalSubjectAccessReview", true),
  authz("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
  authz("selfsubjectrulesreviews", "SelfSubjectRulesReview"),
  authz("subjectaccessreviews", "SubjectAccessReview")
]

export const reviewResourceOf = (r: ResourceRequest): ReviewResource | undefined =>
  REVIEW_RESOURCES.find((x) => x.group === r.group && x.version === r.version && x.plural === r.resource)

const Strings = Schema.optional(Schema.Array(Schema.String))
const ResourceAttributes = Schema.Struct({
  namespace: Schema.optional(Schema.String),
  verb: Schema.optional(Schema.String),
  group: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String),
  resource: Schema.optional(Schema.String),
  subresource: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  fieldSelector: Schema.optional(Schema.Unknown),
  labelSelector: Schema.optional(Schema.Unknown)
})
const NonResourceAttributes = Schema.Struct({
  path: Schema.optional(Schema.String),
  verb: Schema.optional(Schema.String)
})
const Spec = Schema.Struct({
  resourceAttributes: Schema.optional(Schema.NullOr(ResourceAttributes)),
  nonResourceAttributes: Schema.optional(Schema.NullOr(NonResourceAttributes)),
  namespace: Schema.optional(Schema.String),
  user: Schema.optional(Schema.String),
  groups: Strings,
  uid: Schema.optional(Schema.String),
  extra: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }))
})
const Review = Schema.Struct({
  apiVersion: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  spec: Schema.optional(Spec)
})
type Review = typeof Review.Type
type Spec = typeof Spec.Type

const EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"

/** ValidateSelfSubjectAccessReviewSpec (and the SubjectAccessReview's, with its subject) */
const validateAccessSpec = (spec: Spec, subject: boolean): ReadonlyArray<FieldError> => {
  const errs: Array<FieldError> = []
  const r = spec.resourceAttributes ?? undefined
  const n = spec.nonResourceAttributes ?? undefined
  if ((r === undefined) === (n === undefined)) errs.push(invalid("spec", n ?? undefined, EXACTLY_ONE))
  if (subject && (spec.user ?? "") === "" && (spec.groups ?? []).length === 0)
    errs.push(invalid("spec.user", spec.user ?? "", "at least one of user or group must be specified"))
  return errs
}

const accessStatus = (authorizer: Authorizer, user: UserInfo, spec: Spec, namespace?: string) => {
  const r = spec.resourceAttributes ?? undefined
  const n = spec.nonResourceAttributes ?? undefined
  const { decision, reason } = authorizer.authorize(
    r !== undefined
      ? {
          user,
          verb: r.verb ?? "",
          resourceRequest: true,
          namespace: namespace ?? r.namespace,
          group: r.group,
          resource: r.resource,
          subresource: r.subresource,
          name: r.name
        }
      : { user, verb: n?.verb ?? "", resourceRequest: false, path: n?.path }
  )
  return {
    allowed: decision === "Allow",
    ...(decision === "Deny" ? { denied: true } : {}),
    ...(reason === "" ? {} : { reason })
  }
}

const subjectOf = (spec: Spec): UserInfo => ({
  username: spec.user ?? "",
  uid: spec.uid,
  groups: spec.groups ?? [],
  extra: spec.extra
})

/** The review's status (or its refusal), as the resource's REST.Create computes it. */
const review = (
  res: ReviewResource,
  body: Review,
  urlNamespace: string | undefined,
  authorizer: Authorizer,
  user: UserInfo
): Either.Either<Record<string, unknown>, StatusError> => {
  const spec = body.spec ?? {}
  const qualified = { group: res.group, kind: res.kind }
  const answer = (status: object, withSpec = true) =>
    Either.right({
      kind: res.kind,
      apiVersion: `${res.group}/${res.version}`,
      metadata: body.metadata ?? {},
      ...(withSpec ? { spec } : { spec: {} }),
      status
    })
  switch (res.kind) {
    case "SelfSubjectReview":
      return answer({ userInfo: { username: user.username, groups: user.groups } }, false)
    case "SelfSubjectRulesReview": {
      if ((spec.namespace ?? "") === "") return Either.left(newBadRequest("no namespace on request"))
      return answer(authorizer.rulesFor(user, spec.namespace!), false)
    }
    case "SelfSubjectAccessReview": {
      const errs = validateAccessSpec(spec, false)
      return errs.length > 0
        ? Either.left(newInvalid(qualified, "", errs))
        : answer(accessStatus(authorizer, user, spec))
    }
    case "SubjectAccessReview": {
      const errs = validateAccessSpec(spec, true)
      return errs.length > 0
        ? Either.left(newInvalid(qualified, "", errs))
        : answer(accessStatus(authorizer, subjectOf(spec), spec))
    }
    default: {
      // LocalSubjectAccessReview: the namespace of the URL, which the attributes must name
      const errs: Array<FieldError> = [...validateAccessSpec(spec, true)]
      const r = spec.resourceAttributes ?? undefined
      if (r !== undefined && r.namespace !== urlNamespace)
        errs.push(invalid("spec.resourceAttributes.namespace", r.namespace ?? "", "must match metadata.namespace"))
      if (spec.nonResourceAttributes != null)
        errs.push(
          invalid("spec.nonResourceAttributes", spec.nonResourceAttributes, "disallowed on this kind of request")
        )
      return errs.length > 0
        ? Either.left(newInvalid(qualified, "", errs))
        : answer(accessStatus(authorizer, subjectOf(spec), spec, urlNamespace))
    }
  }
}

/** POST of a review: decode the body by its content type, review, answer 201 in the negotiated type. */
export const serveReview = (
  res: ReviewResource,
  r: ResourceRequest,
  req: HttpServerRequest.HttpServerRequest,
  authorizer: Authorizer = alwaysAllow,
  user: UserInfo = ANONYMOUS
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    if (r.name !== undefined || r.subresource !== undefined || (res.namespaced && r.namespace === undefined))
      return yield* Effect.fail(notFoundResource())
    if (r.verb !== "create")
      return yield* Effect.fail(
        new MethodNotAllowed({
          message: "the server does not allow this method on the requested resource",
          details: {}
        })
      )
    const apiVersion = `${res.group}/${res.version}`
    const output = yield* negotiateOutput(req.headers["accept"], false, true)
    const decoder = yield* decoderFor(req.headers["content-type"])
    const bytes = yield* readBody(req)
    const cannot = (why: string) =>
      newBadRequest(`${res.kind} in version "${res.version}" cannot be handled as a ${res.kind}: ${why}`)
    const doc = decoder.decode(bytes, { apiVersion, kind: res.kind, custom: false })
    if (Either.isLeft(doc)) {
      const f = doc.left
      return yield* Effect.fail(cannot(typeof f === "string" ? f : f.message))
    }
    const body = yield* Schema.decodeUnknown(Review)(doc.right.value).pipe(
      Effect.mapError((e) => cannot(ParseResult.TreeFormatter.formatErrorSync(e)))
    )
    if ((body.kind ?? res.kind) !== res.kind || (body.apiVersion ?? apiVersion) !== apiVersion)
      return yield* Effect.fail(
        newBadRequest(`the kind in the data (${body.kind ?? ""}) does not match the expected kind (${res.kind})`)
      )
    const answer = yield* review(res, body, r.namespace, authorizer, user)
    if (output.protobuf) return protobuf(encodeProtobuf(answer), 201)
    if (output.yaml)
      return HttpServerResponse.text(jsonToYaml(JSON.stringify(answer)), { status: 201, contentType: YAML_TYPE })
    return json(answer, 201)
  })
