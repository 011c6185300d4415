/**
 * Writing responses (endpoints/handlers/responsewriters): JSON bodies, and every error as a
 * metav1.Status with its HTTP code (Retry-After when the Status says so), in the media type the
 * request negotiated (ErrorNegotiated: JSON, YAML or protobuf).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { newBadRequest, type NotFound, type StatusError, statusCode, toStatus } from "../api/status.js"
import { NotFound as NotFoundError } from "../api/status.js"
import { encodeProtobuf, PROTOBUF_TYPE } from "../api/protobuf/envelope.js"
import { jsonToYaml, type OutputMedia, YAML_TYPE } from "./negotiation.js"

export const JSON_TYPE = "application/json"

export const json = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(typeof body === "string" ? body : JSON.stringify(body), { status, contentType: JSON_TYPE })

/** A protobuf body (`k8s\0` + Unknown). */
export const protobuf = (body: Uint8Array, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(body, { status, contentType: PROTOBUF_TYPE })

type ErrorMedia = Pick<OutputMedia, "yaml" | "protobuf">

/** An error as its Status (YAML or protobuf when the request asked for it), with Retry-After when it says so. */
export const statusResponse = (
  e: StatusError,
  media: ErrorMedia = { yaml: false, protobuf: false }
): HttpServerResponse.HttpServerResponse => {
  const status = toStatus(e)
  const retry = status.details?.retryAfterSeconds
  const options = {
    status: statusCode(e),
    ...(retry === undefined || retry <= 0 ? {} : { headers: { "retry-after": String(retry) } })
  }
  if (media.protobuf)
    return HttpServerResponse.uint8Array(encodeProtobuf(status), { ...options, contentType: PROTOBUF_TYPE })
  const body = media.yaml ? jsonToYaml(JSON.stringify(status)) : JSON.stringify(status)
  return HttpServerResponse.text(body, { ...options, contentType: media.yaml ? YAML_TYPE : JSON_TYPE })
}

/** The apiserver's 404 for a path or resource it does not serve. */
export const notFoundResource = (): NotFound =>
  new NotFoundError({ message: "the server could not find the requested resource", details: {} })

export const badRequest = newBadRequest
