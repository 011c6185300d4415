/**
 * Kubernetes' own server-side apply as a test oracle: test/go/kubernetes/cmd/ssa-oracle (the
 * apiserver's FieldManager from k8s.io/apimachinery v0.37.2 over structured-merge-diff), built
 * with Go and cached (go-programs.ts), spawned once per scope and killed when the scope closes.
 * `run` sends one request — one object's life through create/update/apply steps — and answers
 * the object and managedFields after each step, or the step's error (a 409 conflict with its
 * causes). Requests go over the pipe one at a time. The Go program's header documents the
 * protocol; the schemas below decode it.
 *
 *   layer(SsaOracle.layer, { timeout: "10 minutes" })((it) => { it.effect(…, () => SsaOracle.pipe(…)) })
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { Context, Deferred, Effect, Exit, Layer, Queue, Schema } from "effect"
import { goProgram } from "../kubernetes/apiserver/go-programs.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const SsaGvk = Schema.Struct({ group: Schema.String, version: Schema.String, kind: Schema.String })

export const SsaStep = Schema.Struct({
  op: Schema.Literal("create", "update", "apply"),
  manager: Schema.String,
  /** the request body: the whole object (create, update) or the applied configuration */
  object: JsonObject,
  force: Schema.optional(Schema.Boolean),
  /** "" (the main resource) or e.g. "status" */
  subresource: Schema.optional(Schema.String),
  /** RFC 3339: the time of the managedFields entries this step writes (default: the wall clock) */
  time: Schema.optional(Schema.String)
})
export type SsaStep = typeof SsaStep.Type

export const SsaRequest = Schema.Struct({
  /** OpenAPI v2 definitions with x-kubernetes-* extensions, the kind's with x-kubernetes-group-version-kind */
  definitions: JsonObject,
  gvk: SsaGvk,
  /**
   * per subresource ("" the main resource): field paths the strategy resets, never recorded as
   * owned (the values are not reset: the strategy does that, not the field manager)
   */
  resetFields: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Array(Schema.String)) })),
  steps: Schema.Array(SsaStep)
})
export type SsaRequest = typeof SsaRequest.Type

export const SsaStatusCause = Schema.Struct({
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  field: Schema.optional(Schema.String)
})

/** an apimachinery Status (code, reason, message, details.causes), or only a message */
export const SsaStepError = Schema.Struct({
  code: Schema.optional(Schema.Number),
  reason: Schema.optional(Schema.String),
  message: Schema.String,
  causes: Schema.optional(Schema.Array(SsaStatusCause))
})
export type SsaStepError = typeof SsaStepError.Type

/** the live object after the step (managedFields included), or why the step failed */
export const SsaResult = Schema.Union(
  Schema.Struct({ object: JsonObject, error: Schema.Null }),
  Schema.Struct({ object: Schema.Null, error: SsaStepError })
)
export type SsaResult = typeof SsaResult.Type

export const SsaResponse = Schema.Struct({ results: Schema.Array(SsaResult) })
export type SsaResponse = typeof SsaResponse.Type

/** a response line: with `error` when the request itself was refused */
const ResponseLine = Schema.parseJson(
  Schema.Struct({ results: Schema.Array(SsaResult), error: Schema.optional(Schema.String) })
)

export class SsaOracleError extends Schema.TaggedError<SsaOracleError>()("SsaOracleError", {
  message: Schema.String
}) {}

/** the OpenAPI v2 definitions of the built-in kinds, vendored from Kubernetes v1.37.2 */
export const builtinDefinitions = (): Record<string, unknown> => {
  const file = path.resolve(import.meta.dirname, "../../proto/k8s.io/openapi/definitions.json")
  return (JSON.parse(readFileSync(file, "utf8")) as { definitions: Record<string, unknown> }).definitions
}

interface SsaOracleShape {
  readonly run: (request: SsaRequest) => Effect.Effect<SsaResponse, SsaOracleError>
}

export class SsaOracle extends Context.Tag("etcd-effect/test/SsaOracle")<SsaOracle, SsaOracleShape>() {
  static readonly layer: Layer.Layer<SsaOracle, SsaOracleError> = Layer.scoped(
    SsaOracle,
    Effect.gen(function* () {
      const bin = yield* Effect.tryPromise({
        try: () => goProgram("ssa-oracle"),
        catch: (e) => new SsaOracleError({ message: `building ssa-oracle: ${String(e)}` })
      })
      // stdout's lines numbered from 0: the answer to the n-th request written is line n
      const lines = yield* Queue.unbounded<readonly [number, string]>()
      const closed = yield* Deferred.make<never, SsaOracleError>()
      const child = yield* Effect.acquireRelease(
        Effect.sync(() => spawnOracle(bin, lines, closed)),
        (child) =>
          Effect.suspend(() => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
            return Deferred.await(closed)
          }).pipe(Effect.ignore)
      )
      let written = 0
      // the answer to request n; answers to earlier requests whose runs were interrupted are dropped
      const answer = (n: number): Effect.Effect<string, SsaOracleError> =>
        Effect.raceFirst(Queue.take(lines), Deferred.await(closed)).pipe(
          Effect.flatMap(([i, line]) => (i < n ? answer(n) : Effect.succeed(line)))
        )
      const lock = yield* Effect.makeSemaphore(1)
      const run = (request: SsaRequest) =>
        lock.withPermits(1)(
          Effect.sync(() => {
            child.stdin?.write(`${JSON.stringify(request)}\n`)
            return written++
          }).pipe(
            Effect.flatMap(answer),
            Effect.flatMap(Schema.decodeUnknown(ResponseLine)),
            Effect.mapError((e) =>
              e instanceof SsaOracleError ? e : new SsaOracleError({ message: `ssa-oracle's answer: ${e.message}` })
            ),
            Effect.flatMap((response) =>
              response.error === undefined
                ? Effect.succeed<SsaResponse>({ results: response.results })
                : Effect.fail(new SsaOracleError({ message: `ssa-oracle refused the request: ${response.error}` }))
            )
          )
        )
      return { run }
    })
  )
}

/** the process; its stdout lines, numbered, offered to `lines`; `closed` failed when its pipes close */
const spawnOracle = (
  bin: string,
  lines: Queue.Queue<readonly [number, string]>,
  closed: Deferred.Deferred<never, SsaOracleError>
): ChildProcess => {
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4096)
  })
  child.stdin?.on("error", () => {}) // EPIPE after a crash: "close" reports it
  let read = 0
  if (child.stdout)
    createInterface({ input: child.stdout }).on("line", (line) => Queue.unsafeOffer(lines, [read++, line]))
  const fail = (why: string) =>
    Deferred.unsafeDone(
      closed,
      Exit.fail(new SsaOracleError({ message: `ssa-oracle ${why}${stderr && `: ${stderr}`}` }))
    )
  child.on("error", (e) => fail(`did not start: ${e.message}`))
  child.on("close", (code, signal) => fail(`exited (${signal ?? code})`))
  return child
}
