/**
 * A small etcd v2 keys client (client v2 `KeysAPI`) on @effect/platform's HttpClient: get (with
 * `recursive`, `quorum`), one long-poll `watch` (`wait=true&waitIndex=N`), and the writes etcd2's
 * apiserver storage used — set / create / compareAndSwap / delete / compareAndDelete with
 * `prevExist`, `prevIndex`, `prevValue`, `ttl`. Every answer carries `X-Etcd-Index`; error bodies
 * become the tagged errors of errors.ts.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import { errorOfJson, type KeysError, V2ResponseError, V2TransportError } from "./errors.js"
import { type Response, ResponseBody } from "./node.js"

/** Where the keys client sends requests: etcd's client URL (an etcd serving v2). */
export interface KeysClientConfig {
  /** etcd's client URL, e.g. "http://127.0.0.1:2379" (etcd started with --enable-v2=true) */
  readonly endpoint: string
}

export interface GetOptions {
  readonly recursive?: boolean | undefined
  readonly sorted?: boolean | undefined
  /** a linearizable read through raft (the apiserver's `quorum=true`) */
  readonly quorum?: boolean | undefined
}

export interface WatchOptions {
  readonly recursive?: boolean | undefined
  /** the first index to report (AfterIndex + 1); 0: the next change */
  readonly waitIndex: number
}

export interface SetOptions {
  /** false: create only; true: update only */
  readonly prevExist?: boolean | undefined
  readonly prevIndex?: number | undefined
  readonly prevValue?: string | undefined
  /** seconds; the key expires (action "expire") after it */
  readonly ttl?: number | undefined
}

export interface DeleteOptions {
  readonly prevIndex?: number | undefined
  readonly prevValue?: string | undefined
  readonly recursive?: boolean | undefined
  readonly dir?: boolean | undefined
}

/** The etcd v2 keys API: get, long-poll watch, set, create, compare-and-swap, delete, compare-and-delete. */
export interface KeysClientShape {
  /** the key's node (and with `recursive` its children) */
  readonly get: (key: string, options?: GetOptions) => Effect.Effect<Response, KeysError>
  /**
   * One long poll: the first event at or after `waitIndex` under `key`. None when etcd closed the
   * poll without an event (an empty body: ask again from the same index).
   */
  readonly watch: (key: string, options: WatchOptions) => Effect.Effect<Option.Option<Response>, KeysError>
  /** sets the key's value (guarded by `prevExist`, `prevIndex` or `prevValue` when given) */
  readonly set: (key: string, value: string, options?: SetOptions) => Effect.Effect<Response, KeysError>
  /** set with prevExist=false (action "create"; 105 when the key exists) */
  readonly create: (
    key: string,
    value: string,
    options?: { readonly ttl?: number | undefined }
  ) => Effect.Effect<Response, KeysError>
  /** set guarded by prevIndex and/or prevValue (action "compareAndSwap"; 101 on mismatch) */
  readonly compareAndSwap: (
    key: string,
    value: string,
    options: {
      readonly prevIndex?: number | undefined
      readonly prevValue?: string | undefined
      readonly ttl?: number | undefined
    }
  ) => Effect.Effect<Response, KeysError>
  /** deletes the key (a directory with `dir` or `recursive`) */
  readonly delete: (key: string, options?: DeleteOptions) => Effect.Effect<Response, KeysError>
  /** delete guarded by prevIndex and/or prevValue (action "compareAndDelete") */
  readonly compareAndDelete: (
    key: string,
    options: { readonly prevIndex?: number | undefined; readonly prevValue?: string | undefined }
  ) => Effect.Effect<Response, KeysError>
}

/** The etcd v2 keys client service. */
export class KeysClient extends Context.Tag("etcd-effect/kubernetes/etcd2/KeysClient")<KeysClient, KeysClientShape>() {}

/** `/v2/keys` + the key, each segment escaped (keys hold names, not URL syntax). */
export const keysPath = (key: string): string =>
  "/v2/keys" +
  key
    .split("/")
    .map((s) => encodeURIComponent(s))
    .join("/")
    .replace(/^(?!\/)/, "/")

const decodeResponseBody = Schema.decodeUnknownEither(ResponseBody)

const INDEX = /^[0-9]+$/

/**
 * client v2's unmarshalHTTPResponse: an error body is its typed error; a success needs a numeric
 * X-Etcd-Index and a v2 response body. `undefined` for an empty 200 (a long poll that ended).
 */
export const parseResponse = (
  status: number,
  etcdIndexHeader: string | undefined,
  text: string
): Either.Either<Response | undefined, KeysError> => {
  if (text === "") {
    return status === 200
      ? Either.right(undefined)
      : Either.left(new V2ResponseError({ message: `etcd v2 answered ${status} with an empty body`, status }))
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(
      new V2ResponseError({
        message: `invalid JSON in etcd v2 response: ${e instanceof Error ? e.message : String(e)}`,
        status
      })
    )
  }
  const err = errorOfJson(json)
  if (err !== undefined) return Either.left(err)
  if (status >= 300)
    return Either.left(new V2ResponseError({ message: `etcd v2 answered ${status} without an error body`, status }))
  if (etcdIndexHeader === undefined || !INDEX.test(etcdIndexHeader)) {
    return Either.left(
      new V2ResponseError({ message: `invalid X-Etcd-Index header: ${JSON.stringify(etcdIndexHeader ?? "")}`, status })
    )
  }
  const body = decodeResponseBody(json)
  if (Either.isLeft(body)) {
    return Either.left(
      new V2ResponseError({
        message: `unexpected etcd v2 response: ${ParseResult.TreeFormatter.formatErrorSync(body.left)}`,
        status
      })
    )
  }
  return Either.right({ ...body.right, etcdIndex: Number(etcdIndexHeader) })
}

type Params = Record<string, string>

const boolParam = (p: Params, name: string, v: boolean | undefined) => {
  if (v !== undefined) p[name] = v ? "true" : "false"
}

/** A keys client over the HttpClient in context. */
export const make = (config: KeysClientConfig): Effect.Effect<KeysClientShape, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (http) => {
    const base = config.endpoint.replace(/\/+$/, "")

    /** One request, its whole body read; transport failures are V2TransportError. */
    const call = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<Response | undefined, KeysError> =>
      http.execute(request).pipe(
        Effect.flatMap((res) =>
          Effect.map(res.text, (text) => parseResponse(res.status, res.headers["x-etcd-index"], text))
        ),
        Effect.catchTag("RequestError", "ResponseError", (e) =>
          Effect.fail(new V2TransportError({ message: e.message }))
        ),
        Effect.flatMap((r) => r)
      )

    const must = (effect: Effect.Effect<Response | undefined, KeysError>): Effect.Effect<Response, KeysError> =>
      Effect.flatMap(effect, (r) =>
        r === undefined
          ? Effect.fail(new V2ResponseError({ message: "etcd v2 answered 200 with an empty body", status: 200 }))
          : Effect.succeed(r)
      )

    const url = (key: string) => base + keysPath(key)

    const get: KeysClientShape["get"] = (key, options = {}) => {
      const p: Params = {}
      boolParam(p, "recursive", options.recursive)
      boolParam(p, "sorted", options.sorted)
      boolParam(p, "quorum", options.quorum)
      return must(call(HttpClientRequest.get(url(key), { urlParams: p })))
    }

    const watch: KeysClientShape["watch"] = (key, options) => {
      const p: Params = { wait: "true" }
      boolParam(p, "recursive", options.recursive)
      if (options.waitIndex > 0) p["waitIndex"] = String(options.waitIndex)
      return Effect.map(call(HttpClientRequest.get(url(key), { urlParams: p })), Option.fromNullable)
    }

    const set: KeysClientShape["set"] = (key, value, options = {}) => {
      const p: Params = {}
      boolParam(p, "prevExist", options.prevExist)
      if (options.prevIndex !== undefined) p["prevIndex"] = String(options.prevIndex)
      if (options.prevValue !== undefined) p["prevValue"] = options.prevValue
      if (options.ttl !== undefined && options.ttl > 0) p["ttl"] = String(options.ttl)
      return must(
        call(HttpClientRequest.put(url(key), { urlParams: p }).pipe(HttpClientRequest.bodyUrlParams({ value })))
      )
    }

    const del: KeysClientShape["delete"] = (key, options = {}) => {
      const p: Params = {}
      if (options.prevIndex !== undefined) p["prevIndex"] = String(options.prevIndex)
      if (options.prevValue !== undefined) p["prevValue"] = options.prevValue
      boolParam(p, "recursive", options.recursive)
      boolParam(p, "dir", options.dir)
      return must(call(HttpClientRequest.del(url(key), { urlParams: p })))
    }

    return {
      get,
      watch,
      set,
      create: (key, value, options = {}) => set(key, value, { prevExist: false, ttl: options.ttl }),
      compareAndSwap: (key, value, options) => set(key, value, options),
      delete: del,
      compareAndDelete: (key, options) => del(key, options)
    }
  })

/** The client over a given HttpClient layer (FetchHttpClient, NodeHttpClient, …). */
export const layer = (config: KeysClientConfig): Layer.Layer<KeysClient, never, HttpClient.HttpClient> =>
  Layer.effect(KeysClient, make(config))

/** The client over the global fetch. */
export const layerFetch = (config: KeysClientConfig): Layer.Layer<KeysClient> =>
  layer(config).pipe(Layer.provide(FetchHttpClient.layer))
