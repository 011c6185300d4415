/**
 * The lean path's connection: the load generator's own HTTP/2 + gRPC client (src/h2/grpc-client.ts,
 * h2c with prior knowledge) instead of grpc-js, which with protobufjs and the parsed protos was
 * ~70 ms of a one-shot command's start-up. Resolves once the server's first SETTINGS arrived (what
 * grpc-js calls READY), with `undefined` when the connection failed first (refused, reset, not
 * HTTP/2: the caller hands the command to the full program, whose grpc-js retries and reports as
 * it always has), or "timeout" when nothing answered within the dial timeout.
 */
import { isIP } from "node:net"
import { GrpcConnection } from "../../h2/grpc-client.js"
import type { Endpoint } from "../../client/endpoint.js"

/** grpc-js' target for one endpoint, also the :authority it sends */
export const hostPort = (e: Endpoint): string => (isIP(e.host) === 6 ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`)

export const connect = (endpoint: Endpoint, dialTimeoutMs: number): Promise<GrpcConnection | "timeout" | undefined> =>
  new Promise((resolve) => {
    let settled = false
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      connection.close()
      resolve("timeout")
    }, dialTimeoutMs)
    const connection = GrpcConnection.open(hostPort(endpoint), (error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (error === undefined) return resolve(connection)
      connection.close()
      resolve(undefined)
    })
  })
