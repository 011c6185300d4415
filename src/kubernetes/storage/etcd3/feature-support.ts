/**
 * storage/feature/feature_support_checker.go: whether the etcd behind a store answers a progress
 * request safely. Before 3.4.31 and 3.5.13 (etcd-io/etcd#15220), a progress request is answered at
 * once with the store's revision, ahead of events still on their way to the watch, so a watch
 * cache advanced by it serves reads "fresh" at an RV whose events it has not applied. The
 * apiserver asks for progress only when every endpoint has the fix; so does the Cacher here.
 */
import { Effect } from "effect"
import type { EtcdClientShape } from "../../../client/client.js"

/** "3.4.31", "3.5.13-rc.0", … → whether RequestWatchProgress is safe on that version. */
export const progressRequestSafe = (version: string): boolean => {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version)
  if (m === null) return false
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (major !== 3) return major > 3
  if (minor === 4) return patch >= 31
  if (minor === 5) return patch >= 13
  return minor > 5
}

/** Asks the endpoint once (then remembers); an endpoint that cannot be asked counts as unsafe, asked again next time. */
export const requestWatchProgressCheck = (client: EtcdClientShape): Effect.Effect<boolean> => {
  let known: boolean | undefined
  return Effect.suspend(() =>
    known !== undefined
      ? Effect.succeed(known)
      : client.maintenance.status().pipe(
          Effect.map((s) => (known = progressRequestSafe(s.version))),
          Effect.orElseSucceed(() => false)
        )
  )
}
