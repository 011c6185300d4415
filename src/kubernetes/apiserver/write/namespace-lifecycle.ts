/**
 * The NamespaceLifecycle admission plugin's state (admission.ts is the plugin): namespaces deleted
 * in the last 30 s, which it reads live from etcd rather than from the watch cache
 * (forceLiveLookupCache).
 */

/** forceLiveLookupTTL */
const FORCE_LIVE_LOOKUP_MS = 30_000

/** The plugin's state: namespaces recently deleted (read live, not from the cache). */
export class NamespaceLifecycle {
  private readonly forceLive = new Map<string, number>()

  markDeleted(name: string): void {
    this.forceLive.set(name, Date.now() + FORCE_LIVE_LOOKUP_MS)
    if (this.forceLive.size > 100) {
      const now = Date.now()
      for (const [k, t] of this.forceLive) if (t < now) this.forceLive.delete(k)
    }
  }

  liveLookup(name: string): boolean {
    const t = this.forceLive.get(name)
    return t !== undefined && t > Date.now()
  }
}
