/**
 * etcd's --config-file (issue 46): embed.Config's YAML keys over the defaults, client TLS under
 * client-transport-security, durations as nanoseconds, Go's JSON errors for wrong types, and an
 * unknown key refused (a typo guard; etcd itself ignores one). ETCD_CONFIG_FILE names the file when
 * the flag does not, and a config file replaces the ETCD_* variables, as in etcd.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { parseCommandLine, type ParsedRun } from "../../src/cli/flags/parse.js"
import { serveFlags } from "../../src/cli/flags/serve-flags.js"
import { readConfigFile } from "../../src/cli/serve-config-file.js"

const write = (text: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-yaml-"))
  const file = path.join(dir, "etcd.yaml")
  fs.writeFileSync(file, text)
  return file
}

describe("serve --config-file", () => {
  it("reads etcd's keys, nested TLS and nanosecond durations", () => {
    const file = write(
      [
        "name: node1",
        "data-dir: /var/lib/etcd",
        "listen-client-urls: https://127.0.0.1:2379",
        "advertise-client-urls: https://127.0.0.1:2379",
        "heartbeat-interval: 100",
        "grpc-keepalive-min-time: 1000000000",
        "log-outputs: [stderr]",
        "cipher-suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]",
        "client-transport-security:",
        "  cert-file: /etc/etcd/server.crt",
        "  key-file: /etc/etcd/server.key",
        "  client-cert-auth: true",
        "  trusted-ca-file: /etc/etcd/ca.crt",
        "peer-transport-security:",
        "  cert-file: /etc/etcd/peer.crt"
      ].join("\n")
    )
    const r = readConfigFile(file, serveFlags)
    if (typeof r === "string") throw new Error(r)
    expect(r.values).toMatchObject({
      name: "node1",
      "data-dir": "/var/lib/etcd",
      "listen-client-urls": "https://127.0.0.1:2379",
      "heartbeat-interval": 100,
      "grpc-keepalive-min-time": 1000,
      "log-outputs": ["stderr"],
      "cipher-suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
      "cert-file": "/etc/etcd/server.crt",
      "client-cert-auth": true,
      "trusted-ca-file": "/etc/etcd/ca.crt",
      "peer-cert-file": "/etc/etcd/peer.crt",
      "max-txn-ops": 128
    })
    expect(r.set).toContain("peer-cert-file")
    expect(r.set).not.toContain("max-txn-ops")
  })

  it("refuses unknown keys and wrong types with Go's JSON errors", () => {
    expect(readConfigFile(write("name: x\nfoo-bar: 1\n"), serveFlags)).toBe(
      'error unmarshaling JSON: while decoding JSON: json: unknown field "foo-bar"'
    )
    expect(readConfigFile(write('heartbeat-interval: "abc"\n'), serveFlags)).toBe(
      "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field configYAML.heartbeat-interval of type uint"
    )
    expect(readConfigFile(write("client-transport-security:\n  cert: x\n"), serveFlags)).toBe(
      'error unmarshaling JSON: while decoding JSON: json: unknown field "cert"'
    )
    expect(readConfigFile(write("listen-client-urls: foo\n"), serveFlags)).toBe(
      "--listen-client-urls: URL scheme must be http, https, unix, or unixs: foo"
    )
  })

  it.prop(
    "any uint key round-trips its integer, and any string in it is refused",
    [fc.nat(), fc.string()],
    ([n, s]) => {
      const ok = readConfigFile(write(`max-txn-ops: ${n}\n`), serveFlags)
      expect(typeof ok === "string" ? ok : ok.values["max-txn-ops"]).toBe(n)
      const bad = readConfigFile(write(`max-txn-ops: ${JSON.stringify(`x${s}`)}\n`), serveFlags)
      expect(bad).toMatch(/cannot unmarshal string into Go struct field configYAML.max-txn-ops of type uint/)
    }
  )

  it("ETCD_CONFIG_FILE names the file, and a config file replaces the ETCD_* variables", () => {
    const p = parseCommandLine(["serve"], { ETCD_CONFIG_FILE: "/x.yaml", ETCD_NAME: "n" }) as ParsedRun
    expect(p.values["config-file"]).toBe("/x.yaml")
    expect(p.values["name"]).toBe("default")
    const q = parseCommandLine(["serve", "--config-file=/y.yaml"], { ETCD_CONFIG_FILE: "/x.yaml" }) as ParsedRun
    expect(q.values["config-file"]).toBe("/y.yaml")
    const r = parseCommandLine(["serve"], { ETCD_NAME: "n" }) as ParsedRun
    expect(r.values["name"]).toBe("n")
  })
})
