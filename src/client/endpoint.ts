/**
 * An endpoint as etcdctl takes it, parsed without loading grpc-js: the lean CLI path
 * (src/cli/lean/) checks endpoints with it before deciding whether it can serve a command.
 */
export interface Endpoint {
  readonly host: string
  readonly port: number
  readonly tls: boolean
}

/** "host:port", "[v6]:port", "http(s)://host:port" (etcdctl accepts all of these) */
export const parseEndpoint = (endpoint: string): Endpoint => {
  let rest = endpoint.trim()
  let tls = false
  const scheme = /^([a-z]+):\/\//i.exec(rest)
  if (scheme !== null) {
    tls = scheme[1]!.toLowerCase() === "https"
    rest = rest.slice(scheme[0].length)
  }
  rest = rest.replace(/\/.*$/, "")
  let host: string
  let portText: string | undefined
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]")
    host = rest.slice(1, close)
    portText = rest.slice(close + 1).replace(/^:/, "") || undefined
  } else {
    const colon = rest.lastIndexOf(":")
    host = colon < 0 ? rest : rest.slice(0, colon)
    portText = colon < 0 ? undefined : rest.slice(colon + 1)
  }
  const port = portText === undefined ? 2379 : Number(portText)
  if (host === "" || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`invalid endpoint "${endpoint}"`)
  }
  return { host, port, tls }
}
