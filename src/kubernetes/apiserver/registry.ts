/**
 * The served resources (the apiserver's APIGroupInfo / the CRD handler's crdInfo map): each with
 * its ResourceInfo and its Storage, looked up by group/version/resource on every request. Built-in
 * resources are added at start; CRDs add and remove theirs as they come and go (crd.ts). Each
 * resource's storage has its own scope, closed when the resource stops being served.
 */
import { Effect, Exit, Scope } from "effect"
import type { StorageShape } from "../storage/interfaces.js"
import type { ResourceInfo } from "./resources.js"

/** A served resource: what it is (`ResourceInfo`) and the storage its requests go to. */
export interface ServedResource {
  readonly info: ResourceInfo
  readonly storage: StorageShape
}

interface Entry {
  info: ResourceInfo
  readonly storage: StorageShape
  readonly scope: Scope.CloseableScope
}

const grKey = (group: string, resource: string) => `${group}/${resource}`

/** The resources the API serves, by group and resource: the built-in kinds and the CRDs' as they come and go. */
export class ResourceRegistry {
  private readonly entries = new Map<string, Entry>()
  /** bumped on every change (discovery answers are cached per generation) */
  generation = 0

  constructor(private readonly makeStorage: (info: ResourceInfo) => Effect.Effect<StorageShape, never, Scope.Scope>) {}

  /** The resource at group/version/resource (by plural), if that version is served. */
  lookup(group: string, version: string, resource: string): ServedResource | undefined {
    const e = this.entries.get(grKey(group, resource))
    if (e === undefined || !e.info.versions.includes(version)) return undefined
    return e
  }

  /** The resource `group`/`resource` (plural), whichever versions it serves. */
  byGroupResource(group: string, resource: string): ServedResource | undefined {
    return this.entries.get(grKey(group, resource))
  }

  /** Every served resource. */
  all(): ReadonlyArray<ServedResource> {
    return Array.from(this.entries.values())
  }

  /**
   * Serves `info` (a new storage), or updates what is served: the storage is kept when the
   * resource's storage identity (kind, storage version, scope) is unchanged.
   */
  put(info: ResourceInfo): Effect.Effect<void> {
    return Effect.suspend(() => {
      const key = grKey(info.group, info.plural)
      const old = this.entries.get(key)
      if (
        old !== undefined &&
        old.info.kind === info.kind &&
        old.info.storageVersion === info.storageVersion &&
        old.info.namespaced === info.namespaced
      ) {
        old.info = info
        this.generation++
        return Effect.void
      }
      return Effect.gen(this, function* () {
        if (old !== undefined) yield* this.remove(info.group, info.plural)
        const scope = yield* Scope.make()
        const storage = yield* Scope.extend(this.makeStorage(info), scope)
        this.entries.set(key, { info, storage, scope })
        this.generation++
      })
    })
  }

  /** Stops serving a resource: its watches end, its cache goes. */
  remove(group: string, resource: string): Effect.Effect<void> {
    return Effect.suspend(() => {
      const key = grKey(group, resource)
      const e = this.entries.get(key)
      if (e === undefined) return Effect.void
      this.entries.delete(key)
      this.generation++
      return Scope.close(e.scope, Exit.void)
    })
  }

  /** Closes every resource's storage (server shutdown). */
  close(): Effect.Effect<void> {
    return Effect.forEach(Array.from(this.entries.values()), (e) => Scope.close(e.scope, Exit.void), {
      discard: true
    }).pipe(Effect.zipRight(Effect.sync(() => this.entries.clear())))
  }
}
