/**
 * Request bodies: at most 3 MiB (the apiserver's MaxRequestBodyBytes; more is 413 before any
 * decoding), then JSON (400 with the parser's message otherwise).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Stream } from "effect"
import { BadRequest, RequestEntityTooLarge, type StatusError, UnsupportedMediaType } from "../api/status.js"

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024

const tooLarge = () =>
  new RequestEntityTooLarge({ message: `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}` })

/** The body's bytes, or 413 past the limit (checked on Content-Length first, then while reading). */
export const readBody = (req: HttpServerRequest.HttpServerRequest): Effect.Effect<Uint8Array, StatusError> =>
  Effect.suspend(() => {
    const declared = Number(req.headers["content-length"] ?? "0")
    if (declared > MAX_REQUEST_BODY_BYTES) return Effect.fail(tooLarge())
    const parts: Array<Uint8Array> = []
    let size = 0
    return req.stream.pipe(
      Stream.mapError(() => new BadRequest({ message: "unable to read the request body" })),
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > MAX_REQUEST_BODY_BYTES) return Effect.fail<StatusError>(tooLarge())
        parts.push(chunk)
        return Effect.void
      }),
      Effect.map(() => Buffer.concat(parts))
    )
  })

const decoder = new TextDecoder("utf-8", { fatal: true })

/** JSON of a body; `what` names the expected document in the message. */
export const parseJson = (bytes: Uint8Array): Effect.Effect<unknown, BadRequest> =>
  Effect.try({
    try: () => JSON.parse(decoder.decode(bytes)) as unknown,
    catch: (e) =>
      new BadRequest({
        message: `couldn't get version/kind; json parse error: ${e instanceof Error ? e.message : String(e)}`
      })
  })

/** Bodies of objects are JSON here (protobuf, CBOR and YAML bodies get the apiserver's 415). */
export const checkJsonContentType = (req: HttpServerRequest.HttpServerRequest): Effect.Effect<void, StatusError> => {
  const t = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (t === "" || t === "application/json" || t === "*/*") return Effect.void
  return Effect.fail(
    new UnsupportedMediaType({
      message: `the body of the request was in an unknown format - accepted media types include: application/json`
    })
  )
}

/** The body as a JSON object (the apiserver refuses anything else). */
export const readJsonObject = (
  req: HttpServerRequest.HttpServerRequest
): Effect.Effect<Record<string, unknown>, StatusError> =>
  Effect.flatMap(Effect.zipRight(checkJsonContentType(req), readBody(req)), (bytes) =>
    Effect.flatMap(parseJson(bytes), (u) =>
      typeof u === "object" && u !== null && !Array.isArray(u)
        ? Effect.succeed(u as Record<string, unknown>)
        : Effect.fail(
            new BadRequest({ message: "couldn't get version/kind; json parse error: the body is not a JSON object" })
          )
    )
  )
