/**
 * Running a client command of the full program: the client built from the global flags
 * (client-settings.ts), and etcd's errors printed as etcdctl prints them ("Error: <message>" on
 * stderr, exit code 1).
 */
import { Console, Duration, Effect } from "effect"
import { readFileSync } from "node:fs"
import type { EtcdClientOptions, EtcdClientShape } from "../../client/index.js"
import { type ClientSettings, credentials } from "./client-settings.js"
import type { UsageError } from "./usage.js"

/** Go's words for a file it cannot open ("open ca.pem: no such file or directory"). */
const readPem = (path: string): Buffer => {
  try {
    return readFileSync(path)
  } catch (e) {
    const code = (e as { code?: unknown }).code
    const reason =
      code === "ENOENT" ? "no such file or directory" : code === "EACCES" ? "permission denied" : messageOf(e)
    throw new Error(`open ${path}: ${reason}`)
  }
}

/** A client config from the global flags; `longRunning` commands (watch, keep-alive) have no call deadline. */
export const clientOptions = (s: ClientSettings, longRunning = false): EtcdClientOptions => {
  const pem = (path: string | undefined) => (path === undefined ? undefined : readPem(path))
  return {
    endpoints: s.endpoints,
    dialTimeout: Duration.millis(s.dialTimeoutMs),
    requestTimeout: longRunning ? undefined : Duration.millis(s.commandTimeoutMs),
    keepAliveTime: Duration.millis(s.keepAliveTimeMs),
    keepAliveTimeout: Duration.millis(s.keepAliveTimeoutMs),
    tls: s.tls
      ? { ca: pem(s.caFile), cert: pem(s.certFile), key: pem(s.keyFile), insecureSkipVerify: s.insecureSkipVerify }
      : undefined,
    ...credentials(s)
  }
}

/** Reported failure of a command: printed already; the process exits with `exitCode`. */
export class CommandFailed {
  readonly _tag = "CommandFailed"
  constructor(
    readonly message: string,
    readonly exitCode: number = 1
  ) {}
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

/**
 * Runs `body` with a client built from the global flags. Any failure prints `Error: <message>`
 * (etcd's message verbatim, as etcdctl does) and sets exit code 1.
 */
export const withClient = <A, E>(
  s: ClientSettings,
  body: (client: EtcdClientShape) => Effect.Effect<A, E>,
  options: { readonly longRunning?: boolean } = {}
): Effect.Effect<void> =>
  // loaded on use: usage errors never load the client and grpc-js (start-up time)
  Effect.promise(() => import("../../client/index.js")).pipe(
    Effect.flatMap(({ EtcdClient }) =>
      Effect.flatMap(
        Effect.try({ try: () => clientOptions(s, options.longRunning === true), catch: (e) => e as Error }),
        (config) => Effect.flatMap(EtcdClient, body).pipe(Effect.provide(EtcdClient.layer(config)))
      )
    ),
    Effect.asVoid,
    Effect.catchAll((error) =>
      error instanceof CommandFailed
        ? exitWith(error.exitCode)
        : Console.error(`Error: ${messageOf(error)}`).pipe(Effect.zipRight(exitWith(1)))
    )
  )

/** Reports a usage error as etcdctl words it, with its exit code (no connection is made). */
export const usage = (e: UsageError): Effect.Effect<void> =>
  Console.error(`Error: ${e.message}`).pipe(Effect.zipRight(exitWith(e.exitCode)))
