/**
 * The Event printer (printers/internalversion printEvent), what `kubectl get events` shows: LAST
 * SEEN, TYPE, REASON, OBJECT, MESSAGE, and with -o wide SUBOBJECT, SOURCE, FIRST SEEN, COUNT,
 * NAME. The cells read the core/v1 shape; events.k8s.io/v1 objects are converted first.
 */
import type { KubeObject } from "../../api/object-meta.js"
import { humanDuration } from "../duration.js"
import type { CoreEventObject } from "./event.js"

const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"

/** a printer column (resources.ts's PrinterColumn, whose module imports this one) */
interface PrinterColumn {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly description: string
  readonly priority?: number
  readonly cell: (obj: KubeObject) => unknown
}

const since = (now: () => number, t: string | null | undefined): string =>
  t === undefined || t === null || t === "" ? "<unknown>" : humanDuration(now() - Date.parse(t))

const nonEmpty = (...ss: ReadonlyArray<string | undefined>) => ss.find((s) => s !== undefined && s !== "") ?? ""

interface Row {
  readonly lastSeen: string
  readonly firstSeen: string
  readonly count: number
  readonly target: string
  readonly source: string
}

const rowOf = (e: CoreEventObject, now: () => number): Row => {
  const firstSeen = e.firstTimestamp ? since(now, e.firstTimestamp) : since(now, e.eventTime)
  let lastSeen = e.lastTimestamp ? since(now, e.lastTimestamp) : firstSeen
  let count = e.count ?? 0
  if (e.series !== undefined && e.series !== null) {
    lastSeen = since(now, e.series.lastObservedTime)
    count = e.series.count ?? 0
  } else if (count === 0) count = 1
  const ref = e.involvedObject ?? {}
  const kind = (ref.kind ?? "").toLowerCase()
  const target = (ref.name ?? "") !== "" ? `${kind}/${ref.name}` : kind
  const component = nonEmpty(e.source?.component, e.reportingComponent)
  const instance = nonEmpty(e.source?.host, e.reportingInstance)
  return { lastSeen, firstSeen, count, target, source: instance === "" ? component : `${component}, ${instance}` }
}

/** The columns, over objects that `toCore` turns into core/v1 Events. */
export const eventColumns = (
  toCore: (o: KubeObject) => KubeObject,
  now: () => number = () => Date.now()
): ReadonlyArray<PrinterColumn> => {
  const row = (o: KubeObject): Row => rowOf(toCore(o) as CoreEventObject, now)
  const core = (o: KubeObject) => toCore(o) as CoreEventObject
  return [
    {
      name: "Last Seen",
      type: "string",
      description: "The time at which the most recent occurrence of this event was recorded.",
      cell: (o) => row(o).lastSeen
    },
    {
      name: "Type",
      type: "string",
      description: "Type of this event (Normal, Warning), new types could be added in the future",
      cell: (o) => core(o).type ?? ""
    },
    {
      name: "Reason",
      type: "string",
      description:
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      cell: (o) => core(o).reason ?? ""
    },
    { name: "Object", type: "string", description: "The object that this event is about.", cell: (o) => row(o).target },
    {
      name: "Subobject",
      type: "string",
      priority: 1,
      description:
        'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
      cell: (o) => core(o).involvedObject?.fieldPath ?? ""
    },
    {
      name: "Source",
      type: "string",
      priority: 1,
      description: "The component reporting this event. Should be a short machine understandable string.",
      cell: (o) => row(o).source
    },
    {
      name: "Message",
      type: "string",
      description: "A human-readable description of the status of this operation.",
      cell: (o) => (core(o).message ?? "").trim()
    },
    {
      name: "First Seen",
      type: "string",
      priority: 1,
      description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
      cell: (o) => row(o).firstSeen
    },
    {
      name: "Count",
      type: "string",
      priority: 1,
      description: "The number of times this event has occurred.",
      cell: (o) => row(o).count
    },
    {
      name: "Name",
      type: "string",
      format: "name",
      priority: 1,
      description: NAME_DESCRIPTION,
      cell: (o) => o.metadata.name ?? ""
    }
  ]
}
