/**
 * The etcd-compatible gRPC server: `serve(options)` / `layer(options)` run a whole member (backend,
 * store, watch, lessor, gRPC); `layerServer(config)` puts the gRPC server over services already
 * in context.
 *
 * @module
 */
export { API_VERSION } from "./maintenance-server.js"
export {
  type AutoCompaction,
  DEFAULT_CLIENT_URL,
  DEFAULT_METRICS_URL,
  defaultServerConfig,
  parseAutoCompaction,
  parseGoDuration,
  type ServerConfig,
  splitUrls
} from "./config.js"
export {
  EtcdServer,
  type EtcdServerShape,
  layer,
  layerAuth,
  layerMember,
  layerServer,
  serve,
  ServeError
} from "./server.js"
export { silenceGrpcLogs } from "./grpc-logs.js"
export {
  DEFAULT_PROGRESS_NOTIFY_INTERVAL,
  MIN_PROGRESS_NOTIFY_INTERVAL,
  type WatchServerConfig
} from "./watch-server.js"
