/** Raw gRPC helpers for the auth suites: calls with a token, a watch create with a token. */
import * as grpc from "@grpc/grpc-js"
import { rawClient, unaryCall } from "../support/in-process.js"

export type Client = grpc.Client & Record<string, any>

export const b = (s: string) => Buffer.from(s, "latin1")

/** "ok", or "<code> <details>" */
export type Outcome = string

export const withToken = (token: string | undefined): grpc.Metadata => {
  const md = new grpc.Metadata()
  if (token !== undefined) md.set("token", token)
  return md
}

/** A unary call with the token in the metadata, as clientv3 sends it. */
export const callAs = <T = any>(client: Client, method: string, req: unknown, token?: string) =>
  new Promise<{ ok: true; value: T } | { ok: false; code: number; details: string }>((resolve) => {
    client[method](req, withToken(token), (err: grpc.ServiceError | null, value: T) => {
      if (err) resolve({ ok: false, code: err.code, details: err.details })
      else resolve({ ok: true, value })
    })
  })

export const outcome = async (client: Client, method: string, req: unknown, token?: string): Promise<Outcome> => {
  const r = await callAs(client, method, req, token)
  return r.ok ? "ok" : `${r.code} ${r.details}`
}

/** Opens a watch with `token`, sends one create and reports "ok" or the cancel reason. */
export const watchOutcome = (endpoint: string, create: Record<string, unknown>, token?: string): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const client = rawClient("Watch", endpoint)
    const call = client["Watch"](withToken(token)) as grpc.ClientDuplexStream<any, any>
    const timer = setTimeout(() => done(() => reject(new Error("no watch response"))), 10_000)
    const done = (f: () => void) => {
      clearTimeout(timer)
      call.removeAllListeners("data")
      call.on("error", () => {})
      call.cancel()
      client.close()
      f()
    }
    call.on("data", (r: any) => done(() => resolve(r.canceled ? `canceled ${r.cancel_reason}` : "ok")))
    call.on("error", (e: grpc.ServiceError) => done(() => resolve(`${e.code} ${e.details}`)))
    call.write({ create_request: create })
  })

export interface AuthClients {
  readonly endpoint: string
  readonly kv: Client
  readonly auth: Client
  readonly lease: Client
  readonly maintenance: Client
}

export const clientsOf = (endpoint: string): AuthClients => ({
  endpoint,
  kv: rawClient("KV", endpoint),
  auth: rawClient("Auth", endpoint),
  lease: rawClient("Lease", endpoint),
  maintenance: rawClient("Maintenance", endpoint)
})

export const closeClients = (c: AuthClients) => {
  for (const x of [c.kv, c.auth, c.lease, c.maintenance]) x.close()
}

/** Authenticates; throws when refused. */
export const tokenOf = async (c: AuthClients, name: string, password: string): Promise<string> => {
  const r = await unaryCall<{ token: string }>(c.auth, "Authenticate", { name, password })
  if (!r.ok) throw new Error(`Authenticate ${name}: ${r.code} ${r.details}`)
  return r.value.token
}
