/**
 * Tracing: the client's calls, the server's unary RPCs and the apiserver's verbs are Effect spans;
 * these Layers export them over OTLP/HTTP (@effect/opentelemetry).
 *
 * @module
 */
export { layerFromEnv, layerOtlp, type OtlpOptions, otlpTracesUrl, tracesUrlOfAddress } from "./otlp-exporter.js"
export { checkSamplingRate, MAX_SAMPLING_RATE_PER_MILLION, parentBasedRatio } from "./sampler.js"
