/**
 * The managers of NewDefaultFieldManager, each a decorator of the next as in Go (one function per
 * Go type, same names): what each adds to an update or an apply.
 */
import { ApplyBadRequest, conflictError } from "./apply-errors.js"
import { FieldSet } from "./field-set.js"
import type { FieldManagerConfig, Obj } from "./field-manager-config.js"
import { type Managed, managerIdentifier } from "./managed-fields.js"
import { compare } from "./compare.js"
import { toFieldSet } from "./to-field-set.js"
import * as Updater from "./updater.js"
import { Conflicts } from "./updater.js"
import type { Json } from "./value.js"

export interface Result {
  readonly object: Obj
  readonly managed: Managed
}

export interface Manager {
  update(live: Obj, next: Obj, managed: Managed, manager: string): Result
  apply(live: Obj, config: Obj, managed: Managed, manager: string, force: boolean): Result
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
const groupVersion = (cfg: FieldManagerConfig) =>
  cfg.gvk.group === "" ? cfg.gvk.version : `${cfg.gvk.group}/${cfg.gvk.version}`
const withoutManagedFields = (o: Obj): Obj => {
  const c = structuredClone(o)
  if (c.metadata !== undefined) delete c.metadata["managedFields"]
  return c
}
const annotationsOf = (o: Obj): Record<string, string> =>
  (o.metadata?.["annotations"] as Record<string, string> | undefined) ?? {}

/** structuredMergeManager: the updater over the request's version */
const structuredMerge = (cfg: FieldManagerConfig): Manager => ({
  update: (live, next, managed, manager) => {
    const fields = Updater.update(cfg.typed, live as Json, next as Json, groupVersion(cfg), managed.fields, manager)
    return { object: next, managed: { fields, times: managed.times } }
  },
  apply: (live, config, managed, manager, force) => {
    if (config["apiVersion"] !== groupVersion(cfg))
      throw new ApplyBadRequest(
        `Incorrect version specified in apply patch. Specified patch version: ${String(config["apiVersion"] ?? "")}, expected: ${groupVersion(cfg)}`
      )
    if (config.metadata?.["managedFields"] !== undefined && config.metadata["managedFields"] !== null)
      throw new ApplyBadRequest("metadata.managedFields must be nil")
    const r = Updater.apply(cfg.typed, live as Json, config as Json, groupVersion(cfg), managed.fields, manager, force)
    const object = r.object === undefined ? undefined : (r.object as Obj)
    return { object: object as Obj, managed: { fields: r.managers, times: managed.times } }
  }
})

const STRIP = FieldSet.fields(
  ["apiVersion"],
  ["kind"],
  ["metadata"],
  ["metadata", "name"],
  ["metadata", "namespace"],
  ["metadata", "creationTimestamp"],
  ["metadata", "selfLink"],
  ["metadata", "uid"],
  ["metadata", "clusterName"],
  ["metadata", "generation"],
  ["metadata", "managedFields"],
  ["metadata", "resourceVersion"]
)

/** stripMetaManager: apiVersion, kind and the server-set metadata are nobody's */
const stripMeta = (next: Manager): Manager => {
  const strip = (m: Managed, manager: string) => {
    const vs = m.fields.get(manager)
    if (vs === undefined) return
    const set = vs.set.difference(STRIP)
    if (set.isEmpty()) m.fields.delete(manager)
    else m.fields.set(manager, { ...vs, set })
  }
  return {
    update: (live, obj, managed, manager) => {
      const r = next.update(live, obj, managed, manager)
      strip(r.managed, manager)
      return r
    },
    apply: (live, config, managed, manager, force) => {
      const r = next.apply(live, config, managed, manager, force)
      strip(r.managed, manager)
      return r
    }
  }
}

/** managedFieldsUpdater: a manager's fields are its own plus what this write changed; its time is now */
const managedFieldsUpdater = (cfg: FieldManagerConfig, next: Manager): Manager => ({
  update: (live, obj, managed, manager) => {
    const self = "current-operation"
    const r = next.update(live, obj, managed, self)
    const vs = r.managed.fields.get(self)
    if (vs !== undefined) {
      r.managed.fields.delete(self)
      const prev = r.managed.fields.get(manager)
      r.managed.fields.set(manager, prev === undefined ? vs : { ...vs, set: vs.set.union(prev.set) })
      r.managed.times.set(manager, cfg.now())
    }
    return r
  },
  apply: (live, config, managed, manager, force) => {
    const r = next.apply(live, config, managed, manager, force)
    if (r.object !== undefined) {
      r.managed.times.set(manager, cfg.now())
      return r
    }
    return { object: withoutManagedFields(live), managed: r.managed }
  }
})

/** buildManagerInfoManager: the manager's identifier for the operation */
const buildManagerInfo = (cfg: FieldManagerConfig, next: Manager): Manager => {
  const id = (manager: string, operation: "Apply" | "Update") =>
    managerIdentifier({
      manager: manager === "" ? "unknown" : manager,
      operation,
      apiVersion: groupVersion(cfg),
      subresource: cfg.subresource
    })
  return {
    update: (live, obj, managed, manager) => next.update(live, obj, managed, id(manager, "Update")),
    apply: (live, config, managed, manager, force) => next.apply(live, config, managed, id(manager, "Apply"), force)
  }
}

/** capManagersManager: beyond 10 Update managers, the oldest merge into "ancient-changes" */
const capManagers = (next: Manager, max = 10): Manager => ({
  update: (live, obj, managed, manager) => {
    const r = next.update(live, obj, managed, manager)
    const fields = r.managed.fields
    const times = r.managed.times
    const updaters = [...fields].filter(([, vs]) => !vs.applied).map(([m]) => m)
    if (updaters.length <= max) return r
    const secs = (m: string) => {
      const t = times.get(m)
      return t === undefined ? 0 : Math.floor(Date.parse(t) / 1000)
    }
    updaters.sort((a, b) => secs(a) - secs(b) || (a < b ? -1 : a > b ? 1 : 0))
    const firstOfVersion = new Map<string, string>()
    let length = updaters.length
    for (let i = 0; i < updaters.length && length > max; i++) {
      const m = updaters[i]!
      const vs = fields.get(m)!
      const bucket = managerIdentifier({ manager: "ancient-changes", operation: "Update", apiVersion: vs.apiVersion })
      const first = firstOfVersion.get(vs.apiVersion)
      if (first === undefined) {
        firstOfVersion.set(vs.apiVersion, m)
        continue
      }
      if (!fields.has(bucket)) {
        fields.set(bucket, fields.get(first)!)
        fields.delete(first)
      }
      fields.set(bucket, { ...vs, set: vs.set.union(fields.get(bucket)!.set) })
      fields.delete(m)
      length--
      times.set(bucket, times.get(m))
    }
    return r
  },
  apply: (live, config, managed, manager, force) => next.apply(live, config, managed, manager, force)
})

/** skipNonAppliedManager: an object without managers is tracked from its first apply ("before-first-apply") */
const skipNonApplied = (next: Manager): Manager => ({
  update: (live, obj, managed, manager) => {
    // an existing object (it has a uid) without managedFields stays untracked until applied
    if (managed.fields.size === 0 && ((live.metadata?.["uid"] as string | undefined) ?? "") !== "")
      return { object: obj, managed }
    return next.update(live, obj, managed, manager)
  },
  apply: (live, config, managed, manager, force) => {
    if (managed.fields.size === 0) {
      const empty: Obj = { apiVersion: config["apiVersion"], kind: config["kind"] }
      const r = next.update(empty, live, managed, "before-first-apply")
      return next.apply(r.object, config, r.managed, manager, force)
    }
    return next.apply(live, config, managed, manager, force)
  }
})

/** lastAppliedManager: kubectl's fields still as its last client-side apply left them do not conflict */
const lastAppliedManager = (cfg: FieldManagerConfig, next: Manager): Manager => ({
  update: (live, obj, managed, manager) => next.update(live, obj, managed, manager),
  apply: (live, config, managed, manager, force) => {
    if (manager !== "kubectl") return next.apply(live, config, managed, manager, force)
    try {
      return next.apply(live, config, cloneManaged(managed), manager, force)
    } catch (e) {
      if (!(e instanceof Conflicts)) throw e
      const allowed = allowedFromLastApplied(cfg, live)
      if (allowed === undefined) throw e
      const left = e.conflicts.filter((c) => !allowed.has(c.path))
      if (left.length > 0) throw new Conflicts(left)
      return next.apply(live, config, managed, manager, true)
    }
  }
})

const allowedFromLastApplied = (cfg: FieldManagerConfig, live: Obj): FieldSet | undefined => {
  const text = annotationsOf(live)[LAST_APPLIED]
  if (text === undefined || text === "") return undefined
  let last: Obj
  try {
    last = JSON.parse(text) as Obj
  } catch {
    return undefined
  }
  if (last["apiVersion"] !== groupVersion(cfg)) return undefined
  const { schema, type } = cfg.typed
  const c = compare(schema, type, last as Json, live as Json)
  return toFieldSet(schema, type, last as Json)
    .difference(c.modified)
    .difference(c.added)
    .difference(c.removed)
}

/** lastAppliedUpdater: kubectl's server-side apply keeps a client-side last-applied annotation current */
const lastAppliedUpdater = (next: Manager): Manager => ({
  update: (live, obj, managed, manager) => next.update(live, obj, managed, manager),
  apply: (live, config, managed, manager, force) => {
    const r = next.apply(live, config, managed, manager, force)
    const annotations = annotationsOf(r.object)
    if (manager !== "kubectl" || (annotations[LAST_APPLIED] ?? "") === "") return r
    const applied = structuredClone(config)
    const a = { ...annotationsOf(applied) }
    delete a[LAST_APPLIED]
    if (applied.metadata !== undefined) applied.metadata["annotations"] = a
    const value = `${JSON.stringify(sortKeys(applied))}\n`
    const next2: Record<string, string> = { ...annotations, [LAST_APPLIED]: value }
    if (totalSize(next2) > 256 * 1024) delete next2[LAST_APPLIED]
    r.object.metadata = { ...r.object.metadata, annotations: next2 }
    return r
  }
})

const totalSize = (a: Record<string, string>): number =>
  Object.entries(a).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0)

const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : typeof v === "object" && v !== null
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])])
        )
      : v

/** versionCheckManager: an apply's apiVersion and kind are the resource's */
const versionCheck = (cfg: FieldManagerConfig, next: Manager): Manager => ({
  update: (live, obj, managed, manager) => next.update(live, obj, managed, manager),
  apply: (live, config, managed, manager, force) => {
    const av = typeof config["apiVersion"] === "string" ? config["apiVersion"] : ""
    const slash = av.indexOf("/")
    const group = slash < 0 ? "" : av.slice(0, slash)
    const version = slash < 0 ? av : av.slice(slash + 1)
    const kind = typeof config["kind"] === "string" ? config["kind"] : ""
    if (group !== cfg.gvk.group || version !== cfg.gvk.version || kind !== cfg.gvk.kind)
      throw new ApplyBadRequest(`invalid object type: ${group}/${version}, Kind=${kind}`)
    return next.apply(live, config, managed, manager, force)
  }
})

const cloneManaged = (m: Managed): Managed => ({ fields: new Map(m.fields), times: new Map(m.times) })

/** the whole chain, outermost first; conflicts leave it as ApplyConflict */
export const chain = (cfg: FieldManagerConfig): Manager => {
  const inner = versionCheck(
    cfg,
    lastAppliedUpdater(
      lastAppliedManager(
        cfg,
        skipNonApplied(capManagers(buildManagerInfo(cfg, managedFieldsUpdater(cfg, stripMeta(structuredMerge(cfg))))))
      )
    )
  )
  return {
    update: (live, obj, managed, manager) => inner.update(live, obj, cloneManaged(managed), manager),
    apply: (live, config, managed, manager, force) => {
      try {
        return inner.apply(live, config, cloneManaged(managed), manager, force)
      } catch (e) {
        if (e instanceof Conflicts) throw conflictError(e.conflicts)
        throw e
      }
    }
  }
}
