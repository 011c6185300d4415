/**
 * Test certificates, made at test time with the openssl CLI (.ci/run installs it when missing):
 * a CA, a server certificate for 127.0.0.1/localhost, a client certificate, and the bad ones —
 * an expired server certificate, one for another host, and a second CA that signed nothing here.
 * Everything lives in one temp directory (`dispose` removes it).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export interface CertFiles {
  readonly cert: string
  readonly key: string
}

export interface TestPki {
  readonly dir: string
  /** the CA that signed server, client, expired and wrongHost */
  readonly ca: string
  /** a CA that signed nothing the servers use */
  readonly otherCa: string
  readonly server: CertFiles
  readonly client: CertFiles
  /** a client certificate signed by `otherCa` */
  readonly foreignClient: CertFiles
  /** server certificate whose validity ended yesterday */
  readonly expired: CertFiles
  /** server certificate for "other.example" only */
  readonly wrongHost: CertFiles
  /** a second server certificate for 127.0.0.1 (reload tests), with its own CN */
  readonly server2: CertFiles
  readonly dispose: () => void
}

export const openssl = (args: ReadonlyArray<string>, cwd: string): string =>
  execFileSync("openssl", [...args], { cwd, stdio: ["ignore", "pipe", "pipe"] }).toString()

const makeCa = (dir: string, name: string): void => {
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}-key.pem`], dir)
  openssl(
    [
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}-key.pem`,
      "-sha256",
      "-days",
      "30",
      "-subj",
      `/CN=${name}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
      "-out",
      `${name}.pem`
    ],
    dir
  )
}

const makeLeaf = (
  dir: string,
  name: string,
  ca: string,
  opts: {
    readonly cn: string
    readonly san?: string
    readonly usage: "serverAuth" | "clientAuth" | "both"
    readonly expired?: boolean
  }
): CertFiles => {
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}-key.pem`], dir)
  openssl(["req", "-new", "-key", `${name}-key.pem`, "-subj", `/CN=${opts.cn}`, "-out", `${name}.csr`], dir)
  const usage = opts.usage === "both" ? "serverAuth,clientAuth" : opts.usage
  const ext = [
    "basicConstraints=CA:FALSE",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    `extendedKeyUsage=${usage}`,
    ...(opts.san === undefined ? [] : [`subjectAltName=${opts.san}`])
  ].join("\n")
  fs.writeFileSync(path.join(dir, `${name}.ext`), ext + "\n")
  const days =
    opts.expired === true
      ? // an already-expired certificate: `openssl x509 -days` cannot go back, `ca` can set both dates
        []
      : ["-days", "30"]
  if (opts.expired === true) {
    const yearAgo = new Date(Date.now() - 365 * 86400_000)
    const yesterday = new Date(Date.now() - 86400_000)
    const asn1 = (d: Date) => d.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z"
    fs.writeFileSync(path.join(dir, "index.txt"), "")
    fs.writeFileSync(
      path.join(dir, "ca.cnf"),
      [
        "[ca]",
        "default_ca=d",
        "[d]",
        "database=index.txt",
        `new_certs_dir=.`,
        "default_md=sha256",
        "policy=p",
        "serial=serial",
        "unique_subject=no",
        "copy_extensions=none",
        "[p]",
        "commonName=supplied"
      ].join("\n") + "\n"
    )
    fs.writeFileSync(path.join(dir, "serial"), "1000\n")
    openssl(
      [
        "ca",
        "-batch",
        "-config",
        "ca.cnf",
        "-cert",
        `${ca}.pem`,
        "-keyfile",
        `${ca}-key.pem`,
        "-in",
        `${name}.csr`,
        "-startdate",
        asn1(yearAgo),
        "-enddate",
        asn1(yesterday),
        "-extfile",
        `${name}.ext`,
        "-notext",
        "-out",
        `${name}.pem`
      ],
      dir
    )
  } else {
    openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${ca}.pem`,
        "-CAkey",
        `${ca}-key.pem`,
        "-CAcreateserial",
        "-sha256",
        ...days,
        "-extfile",
        `${name}.ext`,
        "-out",
        `${name}.pem`
      ],
      dir
    )
  }
  return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}-key.pem`) }
}

const LOCAL_SAN = "IP:127.0.0.1,DNS:localhost"

/** Makes a fresh PKI in a temp directory. */
export const makeTestPki = (): TestPki => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-pki-"))
  makeCa(dir, "ca")
  makeCa(dir, "other-ca")
  return {
    dir,
    ca: path.join(dir, "ca.pem"),
    otherCa: path.join(dir, "other-ca.pem"),
    server: makeLeaf(dir, "server", "ca", { cn: "server", san: LOCAL_SAN, usage: "both" }),
    server2: makeLeaf(dir, "server2", "ca", { cn: "server-reloaded", san: LOCAL_SAN, usage: "both" }),
    client: makeLeaf(dir, "client", "ca", { cn: "client", usage: "clientAuth" }),
    foreignClient: makeLeaf(dir, "foreign-client", "other-ca", { cn: "foreign", usage: "clientAuth" }),
    expired: makeLeaf(dir, "expired", "ca", { cn: "expired", san: LOCAL_SAN, usage: "both", expired: true }),
    wrongHost: makeLeaf(dir, "wrong-host", "ca", { cn: "other.example", san: "DNS:other.example", usage: "both" }),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true })
  }
}
