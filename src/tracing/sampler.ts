/**
 * etcd's sampler for --distributed-tracing-sampling-rate: OpenTelemetry's
 * `ParentBased(TraceIDRatioBased(rate / 1_000_000))` (embed/config_tracing.go). A span whose
 * parent was sampled is sampled, one whose parent was not is not; a root span (no parent, or a
 * request without a `traceparent`) is sampled as TraceIDRatioBased decides for a random trace id:
 * its last 8 bytes, as an unsigned 64-bit number shifted right once, below `ratio × 2^63` (so with
 * probability `ratio`). At etcd's default rate 0 only requests that arrive with a sampled
 * `traceparent` are traced.
 *
 * An unsampled span is a plain span of this module that goes nowhere; its ids still propagate, so
 * its children see a parent that was not sampled.
 */
import { type Exit, Option, Tracer } from "effect"

/** etcd's largest --distributed-tracing-sampling-rate: one million samples per million spans. */
export const MAX_SAMPLING_RATE_PER_MILLION = 1_000_000

/** etcd's check of --distributed-tracing-sampling-rate (validateTracingConfig), or undefined when valid. */
export const checkSamplingRate = (ratePerMillion: number): string | undefined =>
  ratePerMillion < 0
    ? "tracing sampling rate must be positive"
    : ratePerMillion > MAX_SAMPLING_RATE_PER_MILLION
      ? `tracing sampling rate must be less than ${MAX_SAMPLING_RATE_PER_MILLION}`
      : undefined

/** TraceIDRatioBased: whether a root span of `traceId` (32 hex digits) is sampled at this rate. */
export const traceIdSampled = (traceId: string, ratePerMillion: number): boolean => {
  if (ratePerMillion >= MAX_SAMPLING_RATE_PER_MILLION) return true
  if (ratePerMillion <= 0) return false
  const bound = BigInt(Math.floor((ratePerMillion / MAX_SAMPLING_RATE_PER_MILLION) * 2 ** 63))
  return BigInt(`0x${traceId.slice(16, 32).padStart(16, "0")}`) >> 1n < bound
}

const randomHex = (length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) out += ((Math.random() * 16) | 0).toString(16)
  return out
}

/** A span that is not sampled: it records nothing and is exported nowhere. */
const unsampledSpan = (
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  context: Parameters<Tracer.Tracer["span"]>[2],
  links: ReadonlyArray<Tracer.SpanLink>,
  startTime: bigint,
  kind: Tracer.SpanKind,
  traceId: string
): Tracer.Span => {
  let status: Tracer.SpanStatus = { _tag: "Started", startTime }
  return {
    _tag: "Span",
    name,
    spanId: randomHex(16),
    traceId,
    parent,
    context,
    get status() {
      return status
    },
    attributes: new Map(),
    links,
    sampled: false,
    kind,
    end: (endTime: bigint, exit: Exit.Exit<unknown, unknown>) => {
      status = { _tag: "Ended", startTime, endTime, exit }
    },
    attribute: () => {},
    event: () => {},
    addLinks: () => {}
  }
}

/** `tracer` with etcd's sampler in front: spans it does not sample never reach it. */
export const parentBasedRatio = (tracer: Tracer.Tracer, ratePerMillion: number): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const traceId = Option.isSome(parent) ? parent.value.traceId : randomHex(32)
      const sampled = Option.isSome(parent) ? parent.value.sampled : traceIdSampled(traceId, ratePerMillion)
      return sampled
        ? tracer.span(name, parent, context, links, startTime, kind, options)
        : unsampledSpan(name, parent, context, links, startTime, kind, traceId)
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })
