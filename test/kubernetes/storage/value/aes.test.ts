/**
 * value/encrypt/aes: the stored layouts (checked against published NIST vectors and by hand with
 * node:crypto), round trips, and every broken value as the apiserver's error, never a throw.
 */
import { it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as crypto from "node:crypto"
import { describe, expect } from "vitest"
import { aesCBC, aesGCM, type FromStorageResult } from "../../../../src/kubernetes/storage/value/index.js"

const hex = (s: string) => Buffer.from(s.replace(/\s/g, ""), "hex")
const text = (b: Uint8Array) => Buffer.from(b).toString("utf8")
const read = (r: FromStorageResult) => (r.ok ? { data: text(r.data), stale: r.stale } : { error: r.error })
const keyOf = (size: number, fill: number) => Buffer.alloc(size, fill)
const KEYS = [keyOf(16, 1), keyOf(24, 2), keyOf(32, 3)]

const SHORT = "the stored data was shorter than the required size"
const OPEN = "cipher: message authentication failed"

describe("aesgcm (NewGCMTransformer)", () => {
  it.prop(
    "round-trips any bytes under any etcd key, with every key size",
    [fc.uint8Array({ maxLength: 4096 }), fc.string({ maxLength: 200 })],
    ([data, etcdKey]) => {
      for (const key of KEYS) {
        const t = aesGCM(key)
        const stored = t.toStorage(data, etcdKey)
        expect(stored.length).toBe(12 + data.length + 16)
        const back = t.fromStorage(stored, etcdKey)
        expect(back.ok && Buffer.from(back.data).equals(Buffer.from(data))).toBe(true)
        expect(back.ok && back.stale).toBe(false)
      }
    }
  )

  it("reads the NIST GCM test vectors laid out as nonce ‖ ciphertext ‖ tag (etcd key = AAD)", () => {
    // GCM spec (McGrew & Viega) test cases 1 and 2: K = 0^128, IV = 0^96, no AAD
    const t = aesGCM(keyOf(16, 0))
    const empty = Buffer.concat([Buffer.alloc(12), hex("58e2fccefa7e3061367f1d57a4e7455a")])
    expect(read(t.fromStorage(empty, ""))).toEqual({ data: "", stale: false })
    const oneBlock = Buffer.concat([
      Buffer.alloc(12),
      hex("0388dace60b6a392f328c2b971b2fe78"),
      hex("ab6e47d42cec13bdf53a67b21257bddf")
    ])
    const r = t.fromStorage(oneBlock, "")
    expect(r.ok && Buffer.from(r.data).equals(Buffer.alloc(16))).toBe(true)
    // the same bytes read under any non-empty etcd key: the AAD differs, the tag does not verify
    expect(read(t.fromStorage(oneBlock, "/registry/secrets/ns/a"))).toEqual({ error: OPEN })
  })

  it("writes a value node:crypto opens with the apiserver's layout and the etcd key as AAD", () => {
    const key = keyOf(32, 7)
    const etcdKey = "/registry/secrets/default/token"
    const stored = aesGCM(key).toStorage(Buffer.from("hello"), etcdKey)
    const d = crypto.createDecipheriv("aes-256-gcm", key, stored.subarray(0, 12))
    d.setAAD(Buffer.from(etcdKey))
    d.setAuthTag(stored.subarray(stored.length - 16))
    expect(Buffer.concat([d.update(stored.subarray(12, stored.length - 16)), d.final()]).toString()).toBe("hello")
    // and a value sealed by hand with a fixed nonce is read back
    const nonce = hex("000102030405060708090a0b")
    const c = crypto.createCipheriv("aes-256-gcm", key, nonce)
    c.setAAD(Buffer.from(etcdKey))
    const sealed = Buffer.concat([nonce, c.update("fixture"), c.final(), c.getAuthTag()])
    expect(read(aesGCM(key).fromStorage(sealed, etcdKey))).toEqual({ data: "fixture", stale: false })
    // nonces are random: two writes of the same bytes differ
    expect(
      Buffer.from(aesGCM(key).toStorage(Buffer.from("x"), "k")).equals(
        Buffer.from(aesGCM(key).toStorage(Buffer.from("x"), "k"))
      )
    ).toBe(false)
  })

  it("a value moved to another etcd key, tampered with, truncated or under another key is refused", () => {
    const t = aesGCM(keyOf(32, 7))
    const stored = Buffer.from(t.toStorage(Buffer.from("secret data"), "/registry/secrets/ns/a"))
    expect(read(t.fromStorage(stored, "/registry/secrets/ns/b"))).toEqual({ error: OPEN })
    for (const at of [0, 11, 12, 20, stored.length - 16, stored.length - 1]) {
      const bad = Buffer.from(stored)
      bad[at]! ^= 0x01
      expect(read(t.fromStorage(bad, "/registry/secrets/ns/a"))).toEqual({ error: OPEN })
    }
    // Go checks only the nonce length itself; Open reports anything shorter than nonce + tag
    for (let n = 0; n < 12; n++)
      expect(read(t.fromStorage(stored.subarray(0, n), "/registry/secrets/ns/a"))).toEqual({ error: SHORT })
    for (let n = 12; n < stored.length; n++) {
      expect(read(t.fromStorage(stored.subarray(0, n), "/registry/secrets/ns/a"))).toEqual({ error: OPEN })
    }
    expect(read(aesGCM(keyOf(32, 8)).fromStorage(stored, "/registry/secrets/ns/a"))).toEqual({ error: OPEN })
  })

  it.prop("random bytes never throw: the apiserver's errors", [fc.uint8Array({ maxLength: 300 })], ([junk]) => {
    const r = aesGCM(keyOf(16, 5)).fromStorage(junk, "/k")
    expect(r).toEqual({ ok: false, error: junk.length < 12 ? SHORT : OPEN })
  })

  it("refuses key sizes crypto/aes refuses", () => {
    for (const n of [0, 8, 15, 17, 31, 33, 64])
      expect(() => aesGCM(Buffer.alloc(n))).toThrow(`crypto/aes: invalid key size ${n}`)
  })
})

describe("aescbc (NewCBCTransformer)", () => {
  it.prop(
    "round-trips any bytes with every key size; the layout is IV ‖ PKCS#7-padded blocks",
    [fc.uint8Array({ maxLength: 4096 })],
    ([data]) => {
      for (const key of KEYS) {
        const t = aesCBC(key)
        const stored = t.toStorage(data, "/k")
        expect(stored.length).toBe(16 + (Math.floor(data.length / 16) + 1) * 16)
        const back = t.fromStorage(stored, "/other/key/too")
        expect(back.ok && Buffer.from(back.data).equals(Buffer.from(data))).toBe(true)
      }
    }
  )

  it("reads the NIST SP 800-38A CBC-AES128 vector laid out as IV ‖ ciphertext", () => {
    const key = hex("2b7e151628aed2a6abf7158809cf4f3c")
    const iv = hex("000102030405060708090a0b0c0d0e0f")
    const c1 = hex("7649abac8119b246cee98e9b12e9197d") // E(6bc1bee22e409f96e93d7e117393172a)
    // its last plaintext byte 0x2a is no PKCS#7 pad: the apiserver's padding error shows the block was opened
    expect(read(aesCBC(key).fromStorage(Buffer.concat([iv, c1]), "/k"))).toEqual({
      error: "invalid PKCS7 data (empty or not padded)"
    })
    // a full padding block after it (encrypted by hand, chained on c1) gives the vector's plaintext
    const pad = crypto.createCipheriv("aes-128-cbc", key, c1).setAutoPadding(false).update(Buffer.alloc(16, 16))
    const r = aesCBC(key).fromStorage(Buffer.concat([iv, c1, pad]), "/k")
    expect(r.ok && Buffer.from(r.data).toString("hex")).toBe("6bc1bee22e409f96e93d7e117393172a")
  })

  it("writes a value node:crypto opens", () => {
    const key = keyOf(32, 7)
    const stored = aesCBC(key).toStorage(Buffer.from("0123456789abcdef"), "k")
    expect(stored.length).toBe(16 + 32)
    const d = crypto.createDecipheriv("aes-256-cbc", key, stored.subarray(0, 16))
    expect(Buffer.concat([d.update(stored.subarray(16)), d.final()]).toString()).toBe("0123456789abcdef")
  })

  it("bad lengths and padding are the apiserver's errors", () => {
    const key = keyOf(32, 7)
    const t = aesCBC(key)
    const stored = t.toStorage(Buffer.from("0123456789abcdef"), "k")
    for (let n = 0; n < 16; n++) expect(read(t.fromStorage(stored.subarray(0, n), "k"))).toEqual({ error: SHORT })
    expect(read(t.fromStorage(stored.subarray(0, 40), "k"))).toEqual({
      error: "the stored data is not a multiple of the block size"
    })
    // an IV alone (Go would index an empty slice): an error, not a crash
    expect(read(t.fromStorage(stored.subarray(0, 16), "k"))).toEqual({
      error: "invalid PKCS7 data (empty or not padded)"
    })
    // blocks whose plaintext ends in a bad pad, built by hand
    const block = (plain: Buffer) => {
      const iv = Buffer.alloc(16, 9)
      return Buffer.concat([iv, crypto.createCipheriv("aes-256-cbc", key, iv).setAutoPadding(false).update(plain)])
    }
    expect(read(t.fromStorage(block(Buffer.alloc(16, 0)), "k"))).toEqual({
      error: "invalid PKCS7 data (empty or not padded)"
    })
    expect(read(t.fromStorage(block(Buffer.alloc(16, 17)), "k"))).toEqual({
      error: "invalid PKCS7 data (empty or not padded)"
    })
    expect(read(t.fromStorage(block(Buffer.concat([Buffer.alloc(13, 1), Buffer.from([3, 2, 3])])), "k"))).toEqual({
      error: "invalid padding on input"
    })
    // aes.go does not cap the pad at the block size: 0x11 × 17 over two blocks is a valid pad
    expect(read(t.fromStorage(block(Buffer.concat([Buffer.alloc(15, 0x41), Buffer.alloc(17, 17)])), "k"))).toEqual({
      data: "A".repeat(15),
      stale: false
    })
  })

  it("CBC is not authenticated: a flipped IV bit changes the plaintext instead of failing", () => {
    const t = aesCBC(keyOf(16, 1))
    const stored = Buffer.from(t.toStorage(Buffer.from("abc"), "k"))
    stored[0]! ^= 0x01
    expect(read(t.fromStorage(stored, "k"))).toEqual({ data: "`bc", stale: false })
  })

  it.prop("random bytes never throw", [fc.uint8Array({ maxLength: 300 })], ([junk]) => {
    const r = aesCBC(keyOf(16, 5)).fromStorage(junk, "/k")
    if (!r.ok) {
      expect([
        SHORT,
        "the stored data is not a multiple of the block size",
        "invalid PKCS7 data (empty or not padded)",
        "invalid padding on input"
      ]).toContain(r.error)
    }
  })
})
