/**
 * The etcd2 tests' world: Debian's etcd 3.4 with --enable-v2=true on random loopback ports, a v2
 * keys client over fetch, and stores under a fresh path prefix per test (tests never see each
 * other's keys).
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import type { KeysError } from "../../../src/kubernetes/etcd2/errors.js"
import { type KeysClientShape, make as makeKeys } from "../../../src/kubernetes/etcd2/keys-client.js"
import { Etcd2Store, type Etcd2StoreConfig } from "../../../src/kubernetes/etcd2/store.js"
import type { StorageShape } from "../../../src/kubernetes/storage/interfaces.js"
import { EtcdProcess } from "../../support/etcd.js"
import { podAttrs } from "../storage/conformance/support.js"

export const startEtcdV2 = () => EtcdProcess.start({ extraArgs: ["--enable-v2=true"] })

export const keysClient = (endpoint: string): KeysClientShape =>
  Effect.runSync(makeKeys({ endpoint }).pipe(Effect.provide(FetchHttpClient.layer)))

let counter = 0
const run0 = Date.now().toString(36)

export interface V2Store {
  readonly store: StorageShape
  readonly pathPrefix: string
  readonly keys: KeysClientShape
}

export const newStore = (keys: KeysClientShape, extra: Partial<Etcd2StoreConfig> = {}): V2Store => {
  const pathPrefix = `/etcd2-${run0}-${counter++}`
  return {
    pathPrefix,
    keys,
    store: Etcd2Store.makeWith(keys, {
      pathPrefix,
      resourcePrefix: "/pods/",
      groupResource: { group: "", resource: "pods" },
      getAttrs: podAttrs,
      typeMeta: { apiVersion: "v1", kind: "Pod" },
      ...extra
    })
  }
}

/** Runs a keys call (the test fails on its error). */
export const runKeys = <A>(effect: Effect.Effect<A, KeysError>): Promise<A> => Effect.runPromise(effect)

/** Waits until `f` holds, polling (a condition, never a fixed sleep as synchronisation). */
export const until = async (
  f: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = "condition"
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
