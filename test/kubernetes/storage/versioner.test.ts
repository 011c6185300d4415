import { it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import { parseResourceVersion } from "../../../src/kubernetes/storage/versioner.js"
import { normalizePathPrefix, prepareKey } from "../../../src/kubernetes/storage/etcd3/store.js"

describe("resourceVersion parsing (APIObjectVersioner)", () => {
  it("unset and 0 are 0; numbers are revisions", () => {
    expect(parseResourceVersion(undefined)).toEqual(Either.right(0n))
    expect(parseResourceVersion("")).toEqual(Either.right(0n))
    expect(parseResourceVersion("0")).toEqual(Either.right(0n))
    expect(parseResourceVersion("18446744073709551615")).toEqual(Either.right(18446744073709551615n))
  })
  it("gives strconv.ParseUint's errors in the apiserver's field error", () => {
    expect(parseResourceVersion("abc")).toEqual(
      Either.left('resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax')
    )
    expect(parseResourceVersion("-1")).toEqual(
      Either.left('resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax')
    )
    expect(parseResourceVersion("18446744073709551616")).toEqual(
      Either.left(
        'resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range'
      )
    )
  })
  it.prop("every uint64 round-trips", [fc.bigInt({ min: 1n, max: (1n << 64n) - 1n })], ([n]) => {
    expect(parseResourceVersion(n.toString())).toEqual(Either.right(n))
  })
})

describe("storage keys (storage.PrepareKey + store.prepareKey)", () => {
  const prep = (key: string, recursive = false) =>
    Either.match(prepareKey("/registry/", "/pods/", key, recursive), { onLeft: (e) => e.message, onRight: (k) => k })
  it("joins the path prefix", () => {
    expect(prep("/pods/ns/foo")).toBe("/registry/pods/ns/foo")
    expect(prep("/pods", true)).toBe("/registry/pods/")
    expect(normalizePathPrefix(undefined)).toBe("/registry/")
    expect(normalizePathPrefix("registry")).toBe("/registry/")
    expect(normalizePathPrefix("/a//b/")).toBe("/a/b/")
    expect(normalizePathPrefix("")).toBe("/")
  })
  it("refuses empty, traversing and foreign keys with the apiserver's messages", () => {
    expect(prep("")).toBe('Internal error occurred: empty key: ""')
    expect(prep("/")).toBe('Internal error occurred: empty key: "/"')
    for (const k of [".", "..", "./x", "../x", "/pods/..", "/pods/.", "/pods/../x", "/pods/./x"]) {
      expect(prep(k)).toBe(`Internal error occurred: invalid key: ${JSON.stringify(k)}`)
    }
    expect(prep("pods")).toBe('Internal error occurred: invalid key: "pods" lacks resource prefix: "/pods/"')
    expect(prep("/pods.apps")).toBe(
      'Internal error occurred: invalid key: "/pods.apps" lacks resource prefix: "/pods/"'
    )
    expect(prep("/foo/", true)).toBe('Internal error occurred: invalid key: "/foo/" lacks resource prefix: "/pods/"')
    // "/pods" names the whole resource: only a recursive list or watch may use it
    expect(prep("/pods")).toBe('Internal error occurred: invalid key: "/pods" lacks resource prefix: "/pods/"')
  })
})
