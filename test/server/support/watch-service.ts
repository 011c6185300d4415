/**
 * The Watch service alone on a grpc-js server, over the stores a test hands it (wrapped to slow or
 * break them): what the watch stream tests need without a whole member.
 */
import * as grpc from "@grpc/grpc-js"
import type { MvccStoreShape } from "../../../src/mvcc/kv.js"
import { serviceDefinition } from "../../../src/proto/load.js"
import type { CallRunner } from "../../../src/server/grpc-bridge.js"
import { passThroughSerializer } from "../../../src/server/grpc-raw-writer.js"
import { makeHeader } from "../../../src/server/header.js"
import { makeWatchService } from "../../../src/server/watch-server.js"
import type { WatchableStoreShape } from "../../../src/watch/watchable-store.js"

export const serveWatchService = async (
  runner: CallRunner,
  stores: { readonly watchable: WatchableStoreShape; readonly store: MvccStoreShape }
): Promise<{ readonly server: grpc.Server; readonly endpoint: string }> => {
  const deps = {
    ...stores,
    header: makeHeader({ clusterId: 1n, memberId: 2n, raftTerm: 2n }),
    config: { maxRequestBytes: 1.5 * 1024 * 1024, progressNotifyInterval: "10 minutes" as const }
  }
  const server = new grpc.Server()
  const def = serviceDefinition("Watch") as grpc.ServiceDefinition
  server.addService({ ...def, Watch: passThroughSerializer(def["Watch"]!) }, makeWatchService(runner, deps) as never)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p)))
  )
  return { server, endpoint: `127.0.0.1:${port}` }
}
