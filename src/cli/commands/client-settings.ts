/**
 * The client commands' global flags, read: where to connect, how to print, the timeouts, TLS and
 * credentials. Plain code (the lean path reads them too); the client's own config is made from
 * these in global.ts.
 */
import type { globalFlags } from "../flags/client-flags.js"
import type { ParsedRun } from "../flags/parse.js"
import { EXIT_BAD_FEATURE, UsageError, valuesOf } from "./usage.js"
import type { WriteOut } from "./output.js"

export interface ClientSettings {
  readonly endpoints: ReadonlyArray<string>
  readonly writeOut: WriteOut
  /** --hex: keys and values in the simple format as \x.. bytes */
  readonly hex: boolean
  readonly dialTimeoutMs: number
  readonly commandTimeoutMs: number
  readonly keepAliveTimeMs: number
  readonly keepAliveTimeoutMs: number
  readonly caFile: string | undefined
  readonly certFile: string | undefined
  readonly keyFile: string | undefined
  readonly insecureSkipVerify: boolean
  /** TLS: an https endpoint, a TLS flag, or --insecure-transport=false */
  readonly tls: boolean
  readonly user: string | undefined
  readonly password: string | undefined
}

/** output formats etcdctl has and this program does not print */
const NOT_HERE = new Set(["table", "fields", "protobuf"])

/** grpc-go raises a client keepalive time below 10 s to 10 s (and etcd refuses pings under 5 s apart) */
const MIN_KEEPALIVE_MS = 10_000

export const clientSettings = (p: ParsedRun): ClientSettings | UsageError => {
  const g = valuesOf<typeof globalFlags>(p)
  const writeOut = g["write-out"]
  if (writeOut !== "simple" && writeOut !== "json") {
    return new UsageError(
      NOT_HERE.has(writeOut) ? `${writeOut} not supported as output format` : "unsupported output format",
      EXIT_BAD_FEATURE
    )
  }
  const endpoints = g.endpoints.map((e) => e.trim()).filter((e) => e !== "")
  const orNone = (s: string) => (s === "" ? undefined : s)
  const caFile = orNone(g.cacert)
  const certFile = orNone(g.cert)
  return {
    endpoints,
    writeOut,
    hex: g.hex,
    dialTimeoutMs: g["dial-timeout"],
    commandTimeoutMs: g["command-timeout"],
    keepAliveTimeMs: Math.max(MIN_KEEPALIVE_MS, g["keepalive-time"]),
    keepAliveTimeoutMs: g["keepalive-timeout"],
    caFile,
    certFile,
    keyFile: orNone(g.key),
    insecureSkipVerify: g["insecure-skip-tls-verify"],
    tls:
      caFile !== undefined ||
      certFile !== undefined ||
      g["insecure-skip-tls-verify"] ||
      !g["insecure-transport"] ||
      endpoints.some((e) => e.startsWith("https://")),
    user: orNone(g.user),
    password: orNone(g.password)
  }
}

/** etcdctl's --user "name:password" (or --user name --password pw): the client's credentials. */
export const credentials = (s: Pick<ClientSettings, "user" | "password">): { username?: string; password?: string } => {
  if (s.user === undefined) return {}
  if (s.password !== undefined) return { username: s.user, password: s.password }
  const colon = s.user.indexOf(":")
  return colon < 0
    ? { username: s.user, password: "" }
    : { username: s.user.slice(0, colon), password: s.user.slice(colon + 1) }
}
