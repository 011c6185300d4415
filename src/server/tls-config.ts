/**
 * etcd's client TLS flags (embed.Config's ClientTLSInfo, ClientAutoTLS, CipherSuites and 3.5's
 * TlsMinVersion/TlsMaxVersion) and their checks, with etcd's words for bad values. Pure: the serve
 * command checks its flags with it before loading the server.
 */

/** TLS versions as etcd's --tls-min-version/--tls-max-version name them. */
export type TlsVersionName = "TLS1.2" | "TLS1.3"

export interface ClientTlsConfig {
  /** --cert-file */
  readonly certFile: string | undefined
  /** --key-file */
  readonly keyFile: string | undefined
  /** --trusted-ca-file: the CA bundle client certificates must chain to */
  readonly trustedCaFile: string | undefined
  /** --client-cert-auth: refuse, at the handshake, a client without a certificate from the trusted CA */
  readonly clientCertAuth: boolean
  /** --auto-tls: a self-signed certificate made at start-up when no cert/key files are given */
  readonly autoTls: boolean
  /** --cipher-suites: Go's names (TLS 1.2 suites; TLS 1.3's are not configurable, as in Go) */
  readonly cipherSuites: ReadonlyArray<string>
  /** --tls-min-version (etcd 3.5; 3.4 always TLS1.2) */
  readonly minVersion: TlsVersionName
  /** --tls-max-version; undefined: the highest supported (TLS1.3) */
  readonly maxVersion: TlsVersionName | undefined
}

export const defaultClientTlsConfig: ClientTlsConfig = {
  certFile: undefined,
  keyFile: undefined,
  trustedCaFile: undefined,
  clientCertAuth: false,
  autoTls: false,
  cipherSuites: [],
  minVersion: "TLS1.2",
  maxVersion: undefined
}

/** Go's crypto/tls suite names (those etcd's tlsutil accepts) → OpenSSL's. */
export const CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: "AES128-SHA",
  TLS_RSA_WITH_AES_256_CBC_SHA: "AES256-SHA",
  TLS_RSA_WITH_AES_128_CBC_SHA256: "AES128-SHA256",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: "ECDHE-ECDSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: "ECDHE-RSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305"
}

/** TLS 1.3's suites: always on when 1.3 is, as in Go (they are not configurable there). */
export const TLS13_SUITES = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

const VERSIONS: ReadonlyArray<TlsVersionName> = ["TLS1.2", "TLS1.3"]

/** --tls-min-version / --tls-max-version ("" is the default), or `{ error }` with the line to print. */
export const parseTlsVersion = (
  flag: string,
  value: string
): TlsVersionName | undefined | { readonly error: string } => {
  if (value === "") return undefined
  if ((VERSIONS as ReadonlyArray<string>).includes(value)) return value as TlsVersionName
  return { error: `unexpected TLS version ${JSON.stringify(value)} for --${flag} (must be one of: TLS1.2, TLS1.3)` }
}

/** --cipher-suites (comma-separated Go names); an error line for an unknown one, as etcd words it. */
export const parseCipherSuites = (value: string): ReadonlyArray<string> | string => {
  const names = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  for (const n of names) if (!(n in CIPHER_SUITES)) return `unexpected TLS cipher suite ${JSON.stringify(n)}`
  return names
}

/**
 * The start-up checks etcd makes on the client TLS flags once it knows whether any client URL is
 * https: an error line, or undefined when they are fine.
 */
export const checkClientTls = (
  tls: ClientTlsConfig,
  httpsUrls: ReadonlyArray<{ readonly url: string; readonly kind: "client" | "metrics" }>
): string | undefined => {
  const max = tls.maxVersion ?? "TLS1.3"
  if (VERSIONS.indexOf(tls.minVersion) > VERSIONS.indexOf(max)) {
    return `min version (${tls.minVersion}) is greater than max version (${max})`
  }
  if (tls.cipherSuites.length > 0 && tls.minVersion === "TLS1.3") {
    return "cipher suites cannot be configured when only TLS1.3 or greater is supported"
  }
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    return "--cert-file and --key-file must be given together"
  }
  const hasCert = tls.certFile !== undefined || tls.autoTls
  if (httpsUrls.length > 0 && !hasCert) {
    const first = httpsUrls[0]!
    return `TLS key/cert (--cert-file, --key-file) must be provided for ${first.kind} url ${first.url} with HTTPS scheme`
  }
  return undefined
}

/** Whether the flags ask for TLS material at all (a cert or auto-tls). */
export const tlsConfigured = (tls: ClientTlsConfig): boolean => tls.certFile !== undefined || tls.autoTls
