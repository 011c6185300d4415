/**
 * storage.SelectionPredicate: which objects a list or watch selects (a label selector AND a field
 * selector over the attributes `getAttrs` extracts), plus the list's limit/continue and the watch's
 * allowWatchBookmarks. Matching is plain and synchronous: it runs once per event per watcher.
 */
import type { KubeObject } from "../api/object-meta.js"

/** A parsed label selector (labels.Selector). */
export interface LabelSelector {
  readonly matches: (labels: Readonly<Record<string, string>>) => boolean
  readonly empty: () => boolean
  /** the canonical text (labels.Selector.String) */
  readonly toString: () => string
}

/** A parsed field selector (fields.Selector). */
export interface FieldSelector {
  readonly matches: (fields: Readonly<Record<string, string>>) => boolean
  readonly empty: () => boolean
  /** the value `field` is required to equal (fields.Selector.RequiresExactMatch), if any */
  readonly requiresExactMatch: (field: string) => string | undefined
  readonly toString: () => string
}

export interface Attrs {
  readonly labels: Readonly<Record<string, string>>
  readonly fields: Readonly<Record<string, string>>
}

/** storage.AttrFunc: the labels and selectable fields of an object. */
export type AttrFunc = (obj: KubeObject) => Attrs

export interface SelectionPredicate {
  readonly label: LabelSelector
  readonly field: FieldSelector
  readonly getAttrs: AttrFunc
  /** list page size (0: no limit) */
  readonly limit: number
  /** a continue token from an earlier page */
  readonly continue: string
  readonly allowWatchBookmarks: boolean
  /** label keys / field names the cacher can use an index for */
  readonly indexLabels?: ReadonlyArray<string>
  readonly indexFields?: ReadonlyArray<string>
}

export const everythingLabels: LabelSelector = { matches: () => true, empty: () => true, toString: () => "" }
export const everythingFields: FieldSelector = {
  matches: () => true,
  empty: () => true,
  requiresExactMatch: () => undefined,
  toString: () => ""
}

/** storage.DefaultClusterScopedAttr / DefaultNamespaceScopedAttr: labels, metadata.name, metadata.namespace. */
export const defaultAttrs: AttrFunc = (obj) => {
  const fields: Record<string, string> = { "metadata.name": obj.metadata.name ?? "" }
  if (obj.metadata.namespace !== undefined) fields["metadata.namespace"] = obj.metadata.namespace
  return { labels: obj.metadata.labels ?? {}, fields }
}

/** storage.Everything: selects every object. */
export const Everything: SelectionPredicate = {
  label: everythingLabels,
  field: everythingFields,
  getAttrs: defaultAttrs,
  limit: 0,
  continue: "",
  allowWatchBookmarks: false
}

/** SelectionPredicate.Empty: no label or field restriction. */
export const isEmpty = (p: SelectionPredicate): boolean => p.label.empty() && p.field.empty()

/** SelectionPredicate.Matches: label AND field selectors over getAttrs(obj). */
export const matches = (p: SelectionPredicate, obj: KubeObject): boolean => {
  if (isEmpty(p)) return true
  const attrs = p.getAttrs(obj)
  return p.label.matches(attrs.labels) && p.field.matches(attrs.fields)
}

/** SelectionPredicate.MatchesObjectAttributes (the cacher filters on precomputed attrs). */
export const matchesAttributes = (p: SelectionPredicate, attrs: Attrs): boolean =>
  p.label.matches(attrs.labels) && p.field.matches(attrs.fields)

/** SelectionPredicate.MatchesSingle: the exact metadata.name asked for, unless continuing a list. */
export const matchesSingle = (p: SelectionPredicate): string | undefined =>
  p.continue !== "" ? undefined : p.field.requiresExactMatch("metadata.name")
