/**
 * The string formats a CRD schema's `format` is checked against (apiextensions'
 * StripUnsupportedFormatsPostProcessor keeps these; kube-openapi's strfmt registry checks them).
 * A format's name is normalized without dashes (`date-time` is `datetime`); any other format is
 * dropped, so it checks nothing.
 */
import { isIP } from "node:net"

const rx = (source: string, flags = "u") => {
  const r = new RegExp(source, flags)
  return (s: string) => r.test(s)
}

const hostname = rx(
  "^([a-zA-Z0-9\\p{S}\\p{L}]((-?[a-zA-Z0-9\\p{S}\\p{L}]{0,62})?)|([a-zA-Z0-9\\p{S}\\p{L}](([a-zA-Z0-9\\-\\p{S}\\p{L}]{0,61}[a-zA-Z0-9\\p{S}\\p{L}])?)(\\.)){1,}([a-zA-Z\\p{L}]){2,63})$"
)

const uuid = (version: string) =>
  rx(
    version === ""
      ? "^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
      : `^[0-9a-f]{8}-?[0-9a-f]{4}-?${version}[0-9a-f]{3}-?${version === "3" ? "" : "[89ab]"}[0-9a-f]{${version === "3" ? 4 : 3}}-?[0-9a-f]{12}$`,
    "iu"
  )

/** time.Parse("2006-01-02"): the digits and a real calendar day. */
const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const t = new Date(Date.UTC(y, mo - 1, d))
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d
}

/** strfmt.IsDateTime: RFC 3339 with optional fractions, or ISO 8601 local time. */
const isDateTime = (s: string): boolean => {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(s)
  if (m === null || !isDate(m[1]!)) return false
  if (m[6] === undefined && m[5] !== undefined) return false
  return Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 60
}

/** strfmt.ParseDuration: Go's time.ParseDuration or "<n> <unit>" pairs (ns…w, long names). */
const UNITS =
  /^(ns|nanoseconds?|us|µs|microseconds?|ms|milliseconds?|s|sec|seconds?|m|min|minutes?|h|hr|hours?|d|days?|w|wk|weeks?)$/
const isDuration = (s: string): boolean => {
  if (/^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/.test(s) || s === "0") return true
  const pairs = Array.from(s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g))
  return pairs.length > 0 && pairs.every((p) => UNITS.test(p[2]!))
}

const isCIDR = (s: string): boolean => {
  const i = s.indexOf("/")
  if (i < 0) return false
  const ip = s.slice(0, i)
  const bits = s.slice(i + 1)
  const v = isIP(ip)
  return v !== 0 && /^\d+$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128)
}

const isMAC = rx(
  "^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\\.){2}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\\.){3}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\\.){9}[0-9a-fA-F]{4}$"
)

/** net/url.ParseRequestURI: an absolute URI or an absolute path. */
const isURI = (s: string): boolean => {
  if (s.startsWith("/")) return !/\s/.test(s)
  try {
    return new URL(s).protocol !== "" && /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)
  } catch {
    return false
  }
}

const CHECKS: Readonly<Record<string, (s: string) => boolean>> = {
  bsonobjectid: rx("^[0-9a-fA-F]{24}$"),
  uri: isURI,
  email: rx("^[^@\\s<>]+@[^@\\s<>]+$|^[^<>]*<[^@\\s<>]+@[^@\\s<>]+>$"),
  hostname: (s) => s.length <= 255 && hostname(s),
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  cidr: isCIDR,
  mac: isMAC,
  uuid: uuid(""),
  uuid3: uuid("3"),
  uuid4: uuid("4"),
  uuid5: uuid("5"),
  isbn: (s) => /^(?:[0-9]{9}X|[0-9]{10}|[0-9]{13})$/.test(s.replace(/[\s-]/g, "")),
  isbn10: (s) => /^(?:[0-9]{9}X|[0-9]{10})$/.test(s.replace(/[\s-]/g, "")),
  isbn13: (s) => /^[0-9]{13}$/.test(s.replace(/[\s-]/g, "")),
  creditcard: (s) =>
    /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(
      s.replace(/\D/g, "")
    ),
  ssn: rx("^\\d{3}[- ]?\\d{2}[- ]?\\d{4}$"),
  hexcolor: rx("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"),
  rgbcolor: rx(
    "^rgb\\(\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*,\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*,\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*\\)$"
  ),
  byte: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0,
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime
}

/** The check of a string format, if the apiserver checks it. */
export const formatCheck = (format: string | undefined): ((s: string) => boolean) | undefined =>
  format === undefined || format === "" ? undefined : CHECKS[format.replaceAll("-", "")]
