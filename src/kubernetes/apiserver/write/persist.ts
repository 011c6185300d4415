/**
 * The last stage: persist, or under `dryRun=All` do what persisting would check and write nothing
 * (registry/generic/registry/dryrun.go's DryRunnableStorage). A dry-run create reads the key (an
 * existing object is the usual 409) and returns the object as it would be stored, without a
 * resourceVersion; a dry-run update reads the object, checks the preconditions and runs the update
 * function once; a dry-run delete reads, checks and validates, and returns the object.
 */
import { Effect } from "effect"
import type { KubeObject } from "../../api/object-meta.js"
import { newAlreadyExists, newNotFound, type StatusError } from "../../api/status.js"
import { checkPreconditions as checkPreconditionsOf } from "../../storage/preconditions.js"
import type { Preconditions, StorageShape, UpdateFunc, ValidateDeletion } from "../../storage/interfaces.js"
import { parseResourceVersion } from "../../storage/versioner.js"
import { groupResourceOf } from "../resources.js"
import type { WriteContext } from "./pipeline.js"

const nameOfKey = (key: string) => key.slice(key.lastIndexOf("/") + 1)

/** storage.Preconditions.Check for the request's resource. */
export const checkPreconditions = (ctx: WriteContext, key: string, p: Preconditions | undefined, obj: KubeObject) =>
  checkPreconditionsOf(groupResourceOf(ctx.info), key, p, obj)

/** The current object, read from etcd (a write never decides on the cache's copy). */
const current = (storage: StorageShape, key: string) => storage.get(key)

export interface Persist {
  /** with the resource's TTL (an etcd lease on the key) when it has one */
  readonly create: (key: string, obj: KubeObject) => Effect.Effect<KubeObject, StatusError>
  readonly update: (
    key: string,
    options: { readonly preconditions?: Preconditions | undefined; readonly tryUpdate: UpdateFunc }
  ) => Effect.Effect<KubeObject, StatusError>
  readonly delete: (
    key: string,
    options: {
      readonly preconditions?: Preconditions | undefined
      readonly validateDeletion?: ValidateDeletion | undefined
    }
  ) => Effect.Effect<KubeObject, StatusError>
}

export const persist = (ctx: WriteContext): Persist => {
  const storage = ctx.storage
  if (!ctx.dryRun) {
    return {
      create: (key, obj) => storage.create(key, obj, ctx.info.ttlSeconds),
      update: (key, o) => storage.guaranteedUpdate(key, o),
      delete: (key, o) => storage.delete(key, o)
    }
  }
  const gr = groupResourceOf(ctx.info)
  return {
    create: (key, obj) =>
      Effect.flatMap(storage.get(key, { ignoreNotFound: true }), (existing) =>
        existing !== undefined
          ? Effect.fail(newAlreadyExists(gr, nameOfKey(key)))
          : Effect.succeed(structuredClone(obj))
      ),
    update: (key, o) =>
      Effect.gen(function* () {
        const cur = yield* current(storage, key)
        if (cur === undefined) return yield* Effect.fail(newNotFound(gr, nameOfKey(key)))
        const pre = checkPreconditions(ctx, key, o.preconditions, cur)
        if (pre !== undefined) return yield* Effect.fail(pre)
        const rv = parseResourceVersion(cur.metadata.resourceVersion)
        const r = yield* o.tryUpdate(cur, { ttl: 0, resourceVersion: rv._tag === "Right" ? rv.right : 0n })
        return r.object
      }),
    delete: (key, o) =>
      Effect.gen(function* () {
        const cur = yield* current(storage, key)
        if (cur === undefined) return yield* Effect.fail(newNotFound(gr, nameOfKey(key)))
        const pre = checkPreconditions(ctx, key, o.preconditions, cur)
        if (pre !== undefined) return yield* Effect.fail(pre)
        if (o.validateDeletion !== undefined) yield* o.validateDeletion(cur)
        return cur
      })
  }
}
