/**
 * `serve`'s distributed tracing from etcd's flags (embed/config_tracing.go): with
 * --enable-distributed-tracing (3.5's --experimental-enable-distributed-tracing) the member's spans
 * go over OTLP to --distributed-tracing-address as --distributed-tracing-service-name, with
 * --distributed-tracing-instance-id as service.instance.id, sampled as etcd samples them
 * (--distributed-tracing-sampling-rate per million root spans, parents' decisions followed). Each
 * flag is read from either of its names (serve-etcd-checks.ts refuses both at once). We speak
 * OTLP/HTTP only: a `host:port` address is the collector's HTTP receiver (docs/operating.md).
 * Without the flag, `OTEL_EXPORTER_OTLP_ENDPOINT` turns export on as before.
 */
type Values = Readonly<Record<string, unknown>>

/** etcd's tracing flags, each from its 3.6 name when given, else from its experimental one. */
export interface TracingFlags {
  readonly enabled: boolean
  readonly address: string
  readonly serviceName: string
  readonly instanceId: string
  readonly samplingRatePerMillion: number
}

/** The tracing flags of a command line (`set`: the flags it named). */
export const tracingFlags = (v: Values, set: ReadonlySet<string>): TracingFlags => {
  const pick = <A>(name: string): A => v[set.has(name) ? name : `experimental-${name}`] as A
  return {
    enabled: pick<boolean>("enable-distributed-tracing"),
    address: pick<string>("distributed-tracing-address"),
    serviceName: pick<string>("distributed-tracing-service-name"),
    instanceId: pick<string>("distributed-tracing-instance-id"),
    samplingRatePerMillion: pick<number>("distributed-tracing-sampling-rate")
  }
}
