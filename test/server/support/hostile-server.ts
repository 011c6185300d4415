/**
 * The server side of the hostile-peer tests: which gRPC transports the server can be started with
 * (issue 12's `ServerConfig.grpcTransport`, once it exists), a member on each, and a normal
 * grpc-js client that must be served while an attacker works on another connection.
 */
import * as grpc from "@grpc/grpc-js"
import * as fs from "node:fs"
import { Duration } from "effect"
import { etcdserverpb } from "../../../src/proto/load.js"
import { defaultServerConfig, type ServerConfig } from "../../../src/server/config.js"
import { defaultClientTlsConfig } from "../../../src/server/tls-config.js"
import type { TestPki } from "../../support/certs.js"
import { type InProcessServer, startInProcess, unaryCall } from "./in-process.js"

export type Transport = "grpc-js" | "lean"

/** a ServerConfig key the server knows today (unknown keys are ignored by `serve`, so ask the defaults) */
export const knows = (key: string): boolean => key in defaultServerConfig

/** The transports this server can run: grpc-js always; "lean" once `grpcTransport` is a config key. */
export const transports: ReadonlyArray<Transport> = (["grpc-js", "lean"] as const).filter(
  (t) => t === "grpc-js" || knows("grpcTransport")
)

/**
 * The spec's handshake deadline (docs/hostile-peers.md: `h2HandshakeTimeout`, default 10 s):
 * the tests set 1 s when the server has the key, else they can only wait for the default.
 */
export const handshakeTimeoutMs = knows("h2HandshakeTimeout") ? 1_000 : 10_000

export interface HostileServer extends InProcessServer {
  readonly port: number
  readonly transport: Transport
  readonly tls: boolean
}

export const startHostileServer = async (
  transport: Transport,
  options: { readonly pki?: TestPki } & Partial<ServerConfig> = {}
): Promise<HostileServer> => {
  const { pki, ...rest } = options
  const extra: Record<string, unknown> = {}
  if (knows("grpcTransport")) extra["grpcTransport"] = transport
  if (knows("h2HandshakeTimeout")) extra["h2HandshakeTimeout"] = Duration.millis(handshakeTimeoutMs)
  const server = await startInProcess({
    ...(pki === undefined
      ? {}
      : {
          listenClientUrls: ["https://127.0.0.1:0"],
          tls: { ...defaultClientTlsConfig, certFile: pki.server.cert, keyFile: pki.server.key }
        }),
    ...(extra as Partial<ServerConfig>),
    ...rest
  })
  return { ...server, port: Number(server.endpoint.split(":").pop()), transport, tls: pki !== undefined }
}

/** A normal grpc-js KV client of the server (its own connection). */
export const normalClient = (server: HostileServer, pki?: TestPki): grpc.Client & Record<string, any> =>
  new etcdserverpb.KV(
    server.endpoint,
    pki === undefined ? grpc.credentials.createInsecure() : grpc.credentials.createSsl(fs.readFileSync(pki.ca))
  ) as grpc.Client & Record<string, any>

/** One Put and a Range that reads it back; undefined when served right, else what went wrong. */
export const putAndRange = async (kv: grpc.Client & Record<string, any>, key: string): Promise<string | undefined> => {
  const value = `v-${key}`
  const put = await unaryCall(kv, "Put", { key: Buffer.from(key), value: Buffer.from(value) })
  if (!put.ok) return `Put ${key}: code ${put.code} ${put.details}`
  const range = await unaryCall<any>(kv, "Range", { key: Buffer.from(key) })
  if (!range.ok) return `Range ${key}: code ${range.code} ${range.details}`
  const got = range.value.kvs[0]?.value?.toString()
  return got === value ? undefined : `Range ${key}: got ${got}`
}

/**
 * Put + Range in a loop until `stop` resolves; at least one round always completes. Returns the
 * rounds served and the failures (there must be none).
 */
export const serveLoop = (kv: grpc.Client & Record<string, any>, prefix: string) => {
  let stopped = false
  let rounds = 0
  const failures: Array<string> = []
  const done = (async () => {
    for (let i = 0; !stopped || rounds === 0; i++) {
      const err = await putAndRange(kv, `${prefix}/${i}`)
      if (err === undefined) rounds++
      else failures.push(err)
      if (failures.length > 0) break
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await done
      return { rounds, failures }
    }
  }
}
