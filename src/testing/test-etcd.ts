/**
 * `Testing.layer`: an in-memory etcd-effect member on a free loopback port and an `EtcdClient`
 * connected to it, as one Layer for @effect/vitest's `layer(...)` / `it.layer(...)` (shared by the
 * tests of a block) or `Effect.provide` (fresh per test). Both run on the live clock (see
 * test-clock.ts); closing the Layer's scope closes the client, then stops the server.
 */
import { Context, Effect, Layer } from "effect"
import type { BackendError } from "../backend/backend.js"
import type { RecoveryError } from "../mvcc/recovery-error.js"
import { EtcdClient, type EtcdClientOptions, make as makeClient } from "../client/client.js"
import type { EtcdError } from "../errors.js"
import type { ServerConfig } from "../server/config.js"
import { EtcdServer, serve, type ServeError } from "../server/server.js"
import { onLiveClock } from "./test-clock.js"

/** Options of `Testing.layer`: the member's config and the client's. */
export interface TestEtcdOptions {
  /** the member's config (default: in memory, `http://127.0.0.1:0`) */
  readonly server?: Partial<ServerConfig> | undefined
  /** the client's config beyond its endpoints */
  readonly client?: Omit<EtcdClientOptions, "endpoints"> | undefined
}

/** A member in memory on a free port and a client of it: `EtcdServer` (its endpoints) and `EtcdClient`. */
export const layer = (
  options: TestEtcdOptions = {}
): Layer.Layer<EtcdServer | EtcdClient, ServeError | BackendError | RecoveryError | EtcdError> =>
  Layer.scopedContext(
    onLiveClock(
      Effect.gen(function* () {
        const server = yield* serve({ listenClientUrls: ["http://127.0.0.1:0"], ...options.server })
        const client = yield* makeClient({ ...options.client, endpoints: server.endpoints })
        return Context.make(EtcdServer, server).pipe(Context.add(EtcdClient, client))
      })
    )
  )
