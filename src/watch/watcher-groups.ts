/**
 * etcd's `synced` and `unsynced` watcher groups (watchable_store.go) as a service, so a program or a
 * test can provide them on their own. The groups are plain synchronous structures (watcher-group.ts):
 * the watchable store, the sync loop and the victims resolve this service once, when their layer is
 * built, and then call the groups directly on every event and watcher.
 */
import { Context, Layer } from "effect"
import { WatcherGroup } from "./watcher-group.js"

/** The two watcher groups: `synced` at the store's head, `unsynced` catching up. */
export interface WatcherGroupsShape {
  /** watchers at the store's head: the commit path (notify) delivers to them */
  readonly synced: WatcherGroup
  /** watchers behind the head: the sync loop catches them up from history */
  readonly unsynced: WatcherGroup
}

/** The watcher groups service, shared by the watchable store, its sync loop and the victims. */
export class WatcherGroups extends Context.Tag("etcd-effect/WatcherGroups")<WatcherGroups, WatcherGroupsShape>() {
  /** Two empty groups, new for each build of the layer. */
  static readonly layer: Layer.Layer<WatcherGroups> = Layer.sync(WatcherGroups, () => ({
    synced: new WatcherGroup({ ordered: false }),
    unsynced: new WatcherGroup()
  }))
}
