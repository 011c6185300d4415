/**
 * MemberList reports the member's peer URLs, as etcd always does: --initial-advertise-peer-urls,
 * etcd's default http://localhost:2380 when unset; over gRPC and through the JSON gateway alike.
 */
import { Cause, Effect, Exit, Logger, LogLevel } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serve } from "../../src/server/index.js"
import { call, type InProcessServer, rawClient, startInProcess } from "./support/in-process.js"

describe("MemberList's peer URLs", () => {
  let byDefault: InProcessServer
  let advertised: InProcessServer

  beforeAll(async () => {
    ;[byDefault, advertised] = await Promise.all([
      startInProcess({ name: "one" }),
      startInProcess({ name: "two", advertisePeerUrls: ["http://10.0.0.7:2380", "https://node-2.example:2380"] })
    ])
  })
  afterAll(async () => {
    await Promise.all([byDefault?.close(), advertised?.close()])
  })

  const memberList = async (s: InProcessServer) => {
    const cluster = rawClient("Cluster", s.endpoint)
    try {
      const grpc = await call(cluster, "MemberList", {})
      const gateway = await (
        await fetch(`http://${s.endpoint}/v3/cluster/member/list`, { method: "POST", body: "{}" })
      ).json()
      return {
        grpc: grpc.members[0].peerURLs,
        gateway: (gateway as { members: Array<{ peerURLs: unknown }> }).members[0]!.peerURLs
      }
    } finally {
      cluster.close()
    }
  }

  it("etcd's default, or the advertised ones, over gRPC and the gateway", async () => {
    expect(await memberList(byDefault)).toEqual({ grpc: ["http://localhost:2380"], gateway: ["http://localhost:2380"] })
    const urls = ["http://10.0.0.7:2380", "https://node-2.example:2380"]
    expect(await memberList(advertised)).toEqual({ grpc: urls, gateway: urls })
  })

  it("a URL that is not one stops start-up with one line", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(serve({ listenClientUrls: ["http://127.0.0.1:0"], advertisePeerUrls: ["localhost:2380"] })).pipe(
        Logger.withMinimumLogLevel(LogLevel.None)
      )
    )
    expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toMatchObject({
      _tag: "Some",
      value: { _tag: "ServeError", message: expect.stringMatching(/^peer URL localhost:2380: /) }
    })
  })
})
