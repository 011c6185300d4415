/**
 * The server suites run on both gRPC transports (vitest.config.ts' projects): the grpc-js project
 * sets ETCD_GRPC_TRANSPORT, which the server config's default honours.
 */
import { describe, expect, it } from "vitest"
import { defaultServerConfig } from "../../src/server/config.js"

describe("gRPC transport selection", () => {
  it("defaults to lean, or to what ETCD_GRPC_TRANSPORT names", () => {
    expect(defaultServerConfig.grpcTransport).toBe(
      process.env["ETCD_GRPC_TRANSPORT"] === "grpc-js" ? "grpc-js" : "lean"
    )
  })
})
