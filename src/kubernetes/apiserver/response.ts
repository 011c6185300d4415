/**
 * Writing responses (endpoints/handlers/responsewriters): JSON bodies, and every error as a
 * metav1.Status with its HTTP code (Retry-After when the Status says so).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { newBadRequest, type NotFound, type StatusError, statusCode, toStatus } from "../api/status.js"
import { NotFound as NotFoundError } from "../api/status.js"
import { jsonToYaml, YAML_TYPE } from "./negotiation.js"

export const JSON_TYPE = "application/json"

export const json = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(typeof body === "string" ? body : JSON.stringify(body), { status, contentType: JSON_TYPE })

/** An error as its Status (YAML when the request asked for YAML), with Retry-After when it says so. */
export const statusResponse = (e: StatusError, yaml = false): HttpServerResponse.HttpServerResponse => {
  const status = toStatus(e)
  const retry = status.details?.retryAfterSeconds
  const body = yaml ? jsonToYaml(JSON.stringify(status)) : JSON.stringify(status)
  return HttpServerResponse.text(body, {
    status: statusCode(e),
    contentType: yaml ? YAML_TYPE : JSON_TYPE,
    ...(retry === undefined || retry <= 0 ? {} : { headers: { "retry-after": String(retry) } })
  })
}

/** The apiserver's 404 for a path or resource it does not serve. */
export const notFoundResource = (): NotFound =>
  new NotFoundError({ message: "the server could not find the requested resource", details: {} })

export const badRequest = newBadRequest
