/**
 * `Testing.layerApiServer`: an in-process Kubernetes API (`etcd-effect apiserver`, with its own
 * in-memory etcd) on a free loopback port, for controller tests in TypeScript: point
 * @kubernetes/client-node (or any HTTP client) at `ApiServer.url`. It runs on the live clock (see
 * test-clock.ts); closing the Layer's scope ends its watches and stops it and its etcd.
 */
import { Context, Layer } from "effect"
import type { ApiServerConfig, ApiServerError } from "../kubernetes/apiserver/config.js"
import { type RunningApiServer, serve } from "../kubernetes/apiserver/server.js"
import { onLiveClock } from "./test-clock.js"

/** The running apiserver of `layerApiServer`: its `url`, `port`, etcd endpoints and etcd client. */
export class ApiServer extends Context.Tag("etcd-effect/testing/ApiServer")<ApiServer, RunningApiServer>() {}

/** An apiserver on a free port over an in-memory etcd of its own (`options` as `etcd-effect apiserver`'s flags). */
export const layerApiServer = (options: Partial<ApiServerConfig> = {}): Layer.Layer<ApiServer, ApiServerError> =>
  Layer.scoped(ApiServer, onLiveClock(serve({ port: 0, ...options })))
