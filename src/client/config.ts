/**
 * How to reach etcd: clientv3.Config's fields that matter here, in Effect terms. `layer(config)`
 * takes it as a value; `clientConfigFromEnv` reads etcdctl's environment variables.
 */
import { Config, Duration, Option, Schedule } from "effect"
import type * as grpc from "@grpc/grpc-js"

/** TLS for the client's connections (etcdctl's --cacert, --cert, --key, --insecure-skip-tls-verify). */
export interface TlsOptions {
  /** PEM of the CA bundle that signs the server certificate (--cacert) */
  readonly ca?: Uint8Array | string | undefined
  /** PEM client certificate and key for mutual TLS (--cert, --key) */
  readonly cert?: Uint8Array | string | undefined
  readonly key?: Uint8Array | string | undefined
  /** name to verify the server certificate against, when it differs from the endpoint host */
  readonly serverName?: string | undefined
  /** accept any server certificate (--insecure-skip-tls-verify); testing only */
  readonly insecureSkipVerify?: boolean | undefined
}

/** How the client reaches a cluster: endpoints, timeouts, TLS, credentials, metadata (etcdctl's global flags). */
export interface EtcdClientConfig {
  /** "host:port", "http://host:port" or "https://host:port" (https turns TLS on) */
  readonly endpoints: ReadonlyArray<string>
  /** how long building the layer waits for a first connection; default 5 s (etcdctl: --dial-timeout 2s) */
  readonly dialTimeout?: Duration.DurationInput | undefined
  /** deadline for each unary call (etcdctl: --command-timeout 5s); default none */
  readonly requestTimeout?: Duration.DurationInput | undefined
  readonly tls?: TlsOptions | undefined
  /**
   * credentials (etcdctl --user): the client authenticates when it connects and sends the token
   * with every call, and authenticates again once when a call is refused for its token (expired,
   * old auth revision), as clientv3 does. Auth disabled on the server: no token is sent.
   */
  readonly username?: string | undefined
  readonly password?: string | undefined
  /** gRPC metadata sent with every call (watches with different metadata use different streams) */
  readonly metadata?: Readonly<Record<string, string>> | undefined
  /** delay between Watch stream reconnection attempts; default etcd's: 1 ms, ×1.25, capped at 100 ms */
  readonly watchRetrySchedule?: Schedule.Schedule<unknown> | undefined
  /** HTTP/2 keepalive ping interval; default 30 s (etcd's server refuses pings more often than 5 s) */
  readonly keepAliveTime?: Duration.DurationInput | undefined
  readonly keepAliveTimeout?: Duration.DurationInput | undefined
  /** extra grpc-js channel options, applied last */
  readonly grpcOptions?: grpc.ChannelOptions | undefined
}

/** etcd clientv3's watch backoff (`openWatchClient`): 1 ms, +25% per attempt, at most 100 ms. */
export const defaultWatchRetrySchedule: Schedule.Schedule<unknown> = Schedule.exponential("1 millis", 1.25).pipe(
  Schedule.union(Schedule.spaced("100 millis"))
)

export const defaultDialTimeout: Duration.Duration = Duration.seconds(5)

/**
 * etcdctl's environment: ETCDCTL_ENDPOINTS (comma-separated), ETCDCTL_DIAL_TIMEOUT,
 * ETCDCTL_COMMAND_TIMEOUT, ETCDCTL_CACERT / ETCDCTL_CERT / ETCDCTL_KEY (file paths are read by the
 * caller; here they are PEM text), ETCDCTL_INSECURE_SKIP_TLS_VERIFY.
 */
export const clientConfigFromEnv: Config.Config<EtcdClientConfig> = Config.all({
  endpoints: Config.array(Config.string(), "ETCDCTL_ENDPOINTS").pipe(Config.withDefault(["127.0.0.1:2379"])),
  dialTimeout: Config.duration("ETCDCTL_DIAL_TIMEOUT").pipe(Config.withDefault(Duration.seconds(2))),
  requestTimeout: Config.duration("ETCDCTL_COMMAND_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
  ca: Config.option(Config.string("ETCDCTL_CACERT")),
  cert: Config.option(Config.string("ETCDCTL_CERT")),
  key: Config.option(Config.string("ETCDCTL_KEY")),
  insecureSkipVerify: Config.boolean("ETCDCTL_INSECURE_SKIP_TLS_VERIFY").pipe(Config.withDefault(false))
}).pipe(
  Config.map(({ ca, cert, dialTimeout, endpoints, insecureSkipVerify, key, requestTimeout }) => {
    const tlsWanted = Option.isSome(ca) || Option.isSome(cert) || insecureSkipVerify
    return {
      endpoints,
      dialTimeout,
      requestTimeout,
      tls: tlsWanted
        ? {
            ca: Option.getOrUndefined(ca),
            cert: Option.getOrUndefined(cert),
            key: Option.getOrUndefined(key),
            insecureSkipVerify
          }
        : undefined
    }
  })
)
