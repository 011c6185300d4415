/**
 * Tracing: the client's calls, the server's unary RPCs and the apiserver's verbs are Effect spans;
 * these Layers export them over OTLP/HTTP (@effect/opentelemetry), every span or as etcd samples.
 *
 * @module
 */
export { layerFromEnv, layerOtlp, type OtlpOptions, otlpTracesUrl } from "./otlp-exporter.js"
export { parentBasedRatio } from "./sampler.js"
