/**
 * `etcd-effect apiserver`'s configuration: kube-apiserver's flag names where they apply, with its
 * defaults. Its own module (no server code) so the CLI's flag parsing loads nothing heavy.
 */
import { Schema } from "effect"

export interface ApiServerConfig {
  /** --etcd-servers: etcd endpoints; empty runs an embedded etcd-effect server on --data-dir */
  readonly etcdServers: ReadonlyArray<string>
  /** --etcd-prefix (default "/registry") */
  readonly etcdPrefix: string
  /** --etcd-cafile / --etcd-certfile / --etcd-keyfile: a TLS etcd */
  readonly etcdCafile?: string | undefined
  readonly etcdCertfile?: string | undefined
  readonly etcdKeyfile?: string | undefined
  /** --data-dir of the embedded etcd (undefined: in memory) */
  readonly dataDir?: string | undefined
  /** --watch-cache (default true) */
  readonly watchCache: boolean
  /** --default-watch-cache-size (default 100; 0 turns the watch cache off) */
  readonly defaultWatchCacheSize: number
  /** --encryption-provider-config */
  readonly encryptionProviderConfig?: string | undefined
  /** --bind-address (default 127.0.0.1) and --port (default 8080; 0 picks a free port) */
  readonly bindAddress: string
  readonly port: number
  /** --tls-cert-file + --tls-private-key-file: serve HTTPS */
  readonly tlsCertFile?: string | undefined
  readonly tlsPrivateKeyFile?: string | undefined
}

export const defaultApiServerConfig: ApiServerConfig = {
  etcdServers: [],
  etcdPrefix: "/registry",
  watchCache: true,
  defaultWatchCacheSize: 100,
  bindAddress: "127.0.0.1",
  port: 8080
}

/** A start-up failure of the apiserver, one line for stderr. */
export class ApiServerError extends Schema.TaggedError<ApiServerError>()("ApiServerError", {
  reason: Schema.Literal("BadConfig", "Etcd", "Listen"),
  message: Schema.String
}) {}
