/**
 * --auto-tls: etcd's transport.SelfCert — an ECDSA P-256 key and a self-signed certificate
 * (Organization "etcd", valid one year, server and client auth, SANs for the listen hosts) in
 * <data-dir>/fixtures/client/{cert,key}.pem, kept and reused across restarts as etcd does.
 *
 * node:crypto signs but does not write certificates, so the X.509 DER is assembled here: a
 * certificate is a handful of fixed ASN.1 structures (docs/decisions.md, "--auto-tls").
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { isIP } from "node:net"
import * as path from "node:path"
import { makeDirs } from "../backend/make-dirs.js"

const tlv = (tag: number, body: Uint8Array): Buffer => {
  const n = body.length
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), len, body])
}
const seq = (...items: ReadonlyArray<Uint8Array>) => tlv(0x30, Buffer.concat(items))
const set = (...items: ReadonlyArray<Uint8Array>) => tlv(0x31, Buffer.concat(items))
const oid = (dotted: string): Buffer => {
  const parts = dotted.split(".").map(Number)
  const out: Array<number> = [parts[0]! * 40 + parts[1]!]
  for (const p of parts.slice(2)) {
    const bytes = [p & 0x7f]
    for (let v = p >>> 7; v > 0; v >>>= 7) bytes.unshift((v & 0x7f) | 0x80)
    out.push(...bytes)
  }
  return tlv(0x06, Buffer.from(out))
}
const integer = (bytes: Uint8Array): Buffer => {
  let b = Buffer.from(bytes)
  while (b.length > 1 && b[0] === 0 && b[1]! < 0x80) b = b.subarray(1)
  if (b[0]! >= 0x80) b = Buffer.concat([Buffer.from([0]), b])
  return tlv(0x02, b)
}
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"))
const utcTime = (d: Date) => tlv(0x17, Buffer.from(d.toISOString().replace(/[-:T]/g, "").slice(2, 14) + "Z", "latin1"))
const bitString = (bytes: Uint8Array, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), bytes]))
const extension = (id: string, critical: boolean, value: Uint8Array) =>
  seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value))

const ipBytes = (ip: string): Buffer => {
  if (isIP(ip) === 4) return Buffer.from(ip.split(".").map(Number))
  // IPv6: expand "::" and write eight 16-bit groups
  const [head = "", tail] = ip.split("::")
  const h = head === "" ? [] : head.split(":")
  const t = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t]
  return Buffer.concat(
    groups.map((g) => {
      const b = Buffer.alloc(2)
      b.writeUInt16BE(parseInt(g, 16))
      return b
    })
  )
}

const ECDSA_SHA256 = "1.2.840.10045.4.3.2"

/** A self-signed certificate and its key, PEM. */
export const makeSelfSignedCert = (hosts: ReadonlyArray<string>, validDays = 365): { cert: string; key: string } => {
  const { privateKey, publicKey } = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
  const name = seq(set(seq(oid("2.5.4.10"), utf8("etcd"))))
  const now = new Date()
  const names = hosts.map((h) => h.replace(/^\[(.*)\]$/, "$1"))
  const san = seq(...names.map((h) => (isIP(h) !== 0 ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, "latin1")))))
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(crypto.randomBytes(16)),
    seq(oid(ECDSA_SHA256)),
    name,
    seq(utcTime(now), utcTime(new Date(now.getTime() + validDays * 86400_000))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(
      0xa3,
      seq(
        // digitalSignature | keyEncipherment
        extension("2.5.29.15", true, bitString(Buffer.from([0xa0]), 5)),
        extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"), oid("1.3.6.1.5.5.7.3.2"))),
        extension("2.5.29.19", true, seq()),
        ...(names.length > 0 ? [extension("2.5.29.17", false, san)] : [])
      )
    )
  )
  const signature = crypto.sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" })
  const der = seq(tbs, seq(oid(ECDSA_SHA256)), bitString(signature))
  const b64 = der.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "")
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString()
  }
}

/**
 * etcd's SelfCert: the certificate and key files in `dir`, made when either is missing; their
 * paths.
 */
export const selfCert = (dir: string, hosts: ReadonlyArray<string>): { certFile: string; keyFile: string } => {
  const certFile = path.join(dir, "cert.pem")
  const keyFile = path.join(dir, "key.pem")
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) return { certFile, keyFile }
  makeDirs(dir, 0o700)
  const { cert, key } = makeSelfSignedCert(hosts)
  fs.writeFileSync(keyFile, key, { mode: 0o600 })
  fs.writeFileSync(certFile, cert, { mode: 0o600 })
  return { certFile, keyFile }
}
