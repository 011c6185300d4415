/**
 * The Kubernetes-style list/watch HTTP API (`etcd-effect apiserver`): `serve(config)` runs it in
 * the caller's scope and returns the URL it serves on.
 *
 * @module
 */
export { type ApiServerConfig, ApiServerError, defaultApiServerConfig } from "./config.js"
export { type RunningApiServer, serve } from "./server.js"
export { ResourceRegistry, type ServedResource } from "./registry.js"
export type { ResourceInfo } from "./resources.js"
