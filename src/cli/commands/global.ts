/**
 * etcdctl's global flags, given to every client command, and the wrapper that runs a command
 * against a client built from them: etcd errors print as etcdctl prints them ("Error: <message>"
 * on stderr) and the process exits 1.
 */
import { Options } from "@effect/cli"
import { Config, Console, Duration, Effect, Option } from "effect"
import { readFileSync } from "node:fs"
import type { EtcdClientOptions, EtcdClientService } from "../../client/index.js"
import { durationMillis } from "./duration-text.js"
import type { WriteOut } from "./output.js"

const endpoints = Options.text("endpoints").pipe(
  Options.withDescription("gRPC endpoints, comma-separated"),
  Options.withFallbackConfig(Config.string("ETCDCTL_ENDPOINTS")),
  Options.withDefault("127.0.0.1:2379")
)
const writeOut = Options.choice("write-out", ["simple", "json"]).pipe(
  Options.withAlias("w"),
  Options.withDescription("set the output format (simple, json)"),
  Options.withDefault("simple" as const)
)
const dialTimeout = Options.text("dial-timeout").pipe(
  Options.withDescription("dial timeout for client connections (e.g. 2s)"),
  Options.withDefault("2s")
)
const commandTimeout = Options.text("command-timeout").pipe(
  Options.withDescription("timeout for short running command (excluding dial timeout)"),
  Options.withDefault("5s")
)
const cacert = Options.file("cacert").pipe(
  Options.withDescription("verify certificates of TLS-enabled secure servers using this CA bundle"),
  Options.optional
)
const cert = Options.file("cert").pipe(
  Options.withDescription("identify secure client using this TLS certificate file"),
  Options.optional
)
const key = Options.file("key").pipe(
  Options.withDescription("identify secure client using this TLS key file"),
  Options.optional
)
const insecureSkipTlsVerify = Options.boolean("insecure-skip-tls-verify").pipe(
  Options.withDescription("skip server certificate verification (CAUTION: testing only)")
)

const user = Options.text("user").pipe(
  Options.withDescription("username[:password] for authentication"),
  Options.withFallbackConfig(Config.string("ETCDCTL_USER")),
  Options.optional
)
const password = Options.text("password").pipe(
  Options.withDescription(
    "password for authentication (if this option is used, --user option shouldn't include password)"
  ),
  Options.withFallbackConfig(Config.string("ETCDCTL_PASSWORD")),
  Options.optional
)

/** Field names differ from flag names where a command's own argument would clash (`key`). */
export const globalOptions = {
  endpoints,
  writeOut,
  dialTimeout,
  commandTimeout,
  caFile: cacert,
  certFile: cert,
  keyFile: key,
  insecureSkipTlsVerify,
  user,
  password
}

export interface GlobalOptions {
  readonly endpoints: string
  readonly writeOut: WriteOut
  readonly dialTimeout: string
  readonly commandTimeout: string
  readonly caFile: Option.Option<string>
  readonly certFile: Option.Option<string>
  readonly keyFile: Option.Option<string>
  readonly insecureSkipTlsVerify: boolean
  readonly user: Option.Option<string>
  readonly password: Option.Option<string>
}

/** etcdctl's --user "name:password" (or --user name --password pw): the client's credentials. */
export const credentials = (g: Pick<GlobalOptions, "user" | "password">): { username?: string; password?: string } => {
  if (Option.isNone(g.user)) return {}
  const u = g.user.value
  if (Option.isSome(g.password)) return { username: u, password: g.password.value }
  const colon = u.indexOf(":")
  return colon < 0 ? { username: u, password: "" } : { username: u.slice(0, colon), password: u.slice(colon + 1) }
}

/** Go-style durations as etcdctl takes them: "500ms", "2s", "1m". */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  const ms = durationMillis(text)
  return ms === undefined ? undefined : Duration.millis(ms)
}

/** A client config from the global flags; `longRunning` commands (watch, keep-alive) have no call deadline. */
export const clientOptions = (g: GlobalOptions, longRunning = false): EtcdClientOptions => {
  const pem = (path: Option.Option<string>) => Option.getOrUndefined(Option.map(path, (p) => readFileSync(p)))
  const tlsWanted =
    Option.isSome(g.caFile) ||
    Option.isSome(g.certFile) ||
    g.insecureSkipTlsVerify ||
    g.endpoints.split(",").some((e) => e.trim().startsWith("https://"))
  return {
    endpoints: g.endpoints
      .split(",")
      .map((e) => e.trim())
      .filter((e) => e !== ""),
    dialTimeout: parseDuration(g.dialTimeout) ?? Duration.seconds(2),
    requestTimeout: longRunning ? undefined : (parseDuration(g.commandTimeout) ?? Duration.seconds(5)),
    tls: tlsWanted
      ? { ca: pem(g.caFile), cert: pem(g.certFile), key: pem(g.keyFile), insecureSkipVerify: g.insecureSkipTlsVerify }
      : undefined,
    ...credentials(g)
  }
}

/** Reported failure of a command: printed already; the process exits 1. */
export class CommandFailed {
  readonly _tag = "CommandFailed"
  constructor(readonly message: string) {}
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * Runs `body` with a client built from the global flags. Any failure prints `Error: <message>`
 * (etcd's message verbatim, as etcdctl does) and sets exit code 1.
 */
export const withClient = <A, E>(
  g: GlobalOptions,
  body: (client: EtcdClientService) => Effect.Effect<A, E>,
  options: { readonly longRunning?: boolean } = {}
): Effect.Effect<void> =>
  // loaded on use: `--help` and usage errors never load the client and grpc-js (start-up time)
  Effect.promise(() => import("../../client/index.js")).pipe(
    Effect.flatMap(({ EtcdClient }) =>
      Effect.flatMap(EtcdClient, body).pipe(
        Effect.provide(EtcdClient.layer(clientOptions(g, options.longRunning === true)))
      )
    ),
    Effect.asVoid,
    Effect.catchAll((error) =>
      error instanceof CommandFailed
        ? Effect.sync(() => {
            process.exitCode = 1
          })
        : Console.error(`Error: ${messageOf(error)}`).pipe(
            Effect.zipRight(
              Effect.sync(() => {
                process.exitCode = 1
              })
            )
          )
    )
  )

/** Reports a usage error as etcdctl words it, and exits 1 (no connection is made). */
export const usage = (message: string): Effect.Effect<void> =>
  Console.error(`Error: ${message}`).pipe(
    Effect.zipRight(
      Effect.sync(() => {
        process.exitCode = 1
      })
    )
  )
