/**
 * What the metrics endpoints read (MetricsSources) and what they give the server (HttpEndpoints):
 * apart from index.ts, which loads listener.ts on use, so that listener.ts does not import index.ts.
 */
import type { Effect, Scope } from "effect"
import type * as Http from "node:http"
import type { BackendShape } from "../../backend/backend.js"
import type { MvccStoreShape } from "../../mvcc/kv.js"
import type { WatchableStoreShape } from "../../watch/watchable-store.js"
import type { ListenAddress } from "../config.js"
import type { ServeError } from "../serve-error.js"
import type { TlsSource } from "../tls-context.js"
import type { GrpcServerMetrics } from "./grpc-metrics.js"

export interface MetricsSources {
  readonly grpc: GrpcServerMetrics
  readonly watchable: WatchableStoreShape
  readonly store: MvccStoreShape
  readonly backend: BackendShape
  /** the version Maintenance.Status reports */
  readonly version: string
  readonly memberId: bigint
  /** the names of the alarms that are up, for /health */
  readonly alarms?: (() => ReadonlyArray<string>) | undefined
}

export interface HttpEndpoints {
  /** /metrics, /health, /livez, /readyz and /version for the client port's HTTP/1 side */
  readonly handler: (req: Http.IncomingMessage, res: Http.ServerResponse) => void
  /**
   * Serves the endpoints (without /version) on the --listen-metrics-urls addresses in the current
   * scope; the bound URLs, in order. The server calls it once the client URLs are bound: a
   * /readyz that answered before clients can connect would lie.
   */
  readonly listen: (
    addrs: ReadonlyArray<ListenAddress>,
    tls?: TlsSource
  ) => Effect.Effect<ReadonlyArray<string>, ServeError, Scope.Scope>
}
