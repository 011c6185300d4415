/**
 * Exporting Effect's spans over OTLP/HTTP (JSON) with @effect/opentelemetry's OtlpTracer: the
 * tracer a program, `etcd-effect serve` or `etcd-effect apiserver` runs on when traces are wanted.
 * The endpoint and service name come from OpenTelemetry's variables, as etcd's and
 * kube-apiserver's exporters read them: `OTEL_EXPORTER_OTLP_ENDPOINT` (http://host:4318; spans go
 * to its /v1/traces; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is the whole URL instead) and
 * `OTEL_SERVICE_NAME`. `etcd-effect serve --enable-distributed-tracing` names them with etcd's flags
 * instead (`tracesUrlOfAddress`), and samples as etcd does (sampler.ts).
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { type Duration, Effect, Layer } from "effect"
import { parentBasedRatio } from "./sampler.js"

/** Where `layerOtlp` sends spans and how: the collector's URL, the service name, the batch interval. */
export interface OtlpOptions {
  /** the collector's traces URL (http://127.0.0.1:4318/v1/traces) */
  readonly url: string
  /** the resource's service.name */
  readonly serviceName: string
  /** how often batched spans are sent (default 5 s) */
  readonly exportInterval?: Duration.DurationInput | undefined
  /** the resource's service.instance.id (etcd's --distributed-tracing-instance-id); none when empty */
  readonly instanceId?: string | undefined
  /**
   * etcd's sampler, ParentBased(TraceIDRatioBased(rate / 1e6)), at this many samples per million
   * root spans (--distributed-tracing-sampling-rate); undefined: every span is sampled
   */
  readonly samplingRatePerMillion?: number | undefined
}

/** Spans of the program it is provided to, sent to an OTLP/HTTP collector as JSON. */
export const layerOtlp = (options: OtlpOptions): Layer.Layer<never> => {
  const otlp = {
    url: options.url,
    resource: {
      serviceName: options.serviceName,
      ...(options.instanceId === undefined || options.instanceId === ""
        ? {}
        : { attributes: { "service.instance.id": options.instanceId } })
    },
    ...(options.exportInterval === undefined ? {} : { exportInterval: options.exportInterval })
  }
  const rate = options.samplingRatePerMillion
  const tracer =
    rate === undefined
      ? OtlpTracer.layer(otlp)
      : Layer.unwrapScoped(Effect.map(OtlpTracer.make(otlp), (t) => Layer.setTracer(parentBasedRatio(t, rate))))
  return tracer.pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
}

/**
 * The traces URL of etcd's --distributed-tracing-address: a `host:port` (etcd's form, there a gRPC
 * endpoint) is the OTLP/HTTP collector at `http://host:port/v1/traces`; an `http://` or `https://`
 * URL is taken as the collector's, `/v1/traces` added when it has no path.
 */
export const tracesUrlOfAddress = (address: string): string => {
  if (!/^https?:\/\//.test(address)) return `http://${address}/v1/traces`
  const url = new URL(address)
  return url.pathname === "/" || url.pathname === "" ? `${address.replace(/\/+$/, "")}/v1/traces` : address
}

/** The traces URL OpenTelemetry's variables name, or undefined when neither is set. */
export const otlpTracesUrl = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const traces = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
  if (traces !== undefined && traces !== "") return traces
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"]
  if (base === undefined || base === "") return undefined
  return `${base.replace(/\/+$/, "")}/v1/traces`
}

/**
 * `layerOtlp` when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is set, else nothing:
 * Effect's own tracer, whose spans go nowhere. `OTEL_SERVICE_NAME` overrides `serviceName`.
 */
export const layerFromEnv = (
  serviceName: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Layer.Layer<never> => {
  const url = otlpTracesUrl(env)
  if (url === undefined) return Layer.empty
  const name = env["OTEL_SERVICE_NAME"]
  return layerOtlp({ url, serviceName: name === undefined || name === "" ? serviceName : name })
}
