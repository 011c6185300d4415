/**
 * storage.SelectionPredicate: which objects a list or watch selects (a label selector AND a field
 * selector over the attributes `getAttrs` extracts), plus the list's limit/continue and the watch's
 * allowWatchBookmarks. Matching is plain and synchronous: it runs once per event per watcher.
 */
import { Either } from "effect"
import * as Fields from "../api/fields.js"
import type { FieldSelector } from "../api/fields.js"
import * as Labels from "../api/labels.js"
import type { LabelSelector } from "../api/labels.js"
import type { KubeObject } from "../api/object-meta.js"
import { type BadRequest, newBadRequest } from "../api/status.js"

export type { FieldSelector, LabelSelector }

/** An object's labels and selectable fields, as predicates match them. */
export interface Attrs {
  readonly labels: Readonly<Record<string, string>>
  readonly fields: Readonly<Record<string, string>>
}

/** storage.AttrFunc: the labels and selectable fields of an object. */
export type AttrFunc = (obj: KubeObject) => Attrs

/** storage.SelectionPredicate: label and field selectors, paging, bookmarks and the cacher's index hints. */
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

/** The label selector that selects every object. */
export const everythingLabels: LabelSelector = Labels.everything
/** The field selector that selects every object. */
export const everythingFields: FieldSelector = Fields.everything

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

/** A predicate from its parts (unset parts select everything). */
export const selectionPredicate = (parts: Partial<SelectionPredicate>): SelectionPredicate => ({
  ...Everything,
  ...parts
})

/** A list or watch request's query parameters, before they are parsed into a `SelectionPredicate`. */
export interface PredicateQuery {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly allowWatchBookmarks?: boolean | undefined
  readonly getAttrs?: AttrFunc | undefined
  /** the fields this resource can select on; others are refused ("field label not supported") */
  readonly supportedFields?: ReadonlyArray<string> | undefined
  /** the message for a field not in supportedFields (default: "field label not supported: <f>") */
  readonly unsupportedField?: ((field: string) => string) | undefined
}

/**
 * The predicate of a list or watch request's query, or the apiserver's 400 for a selector that
 * does not parse (the message of labels.Parse / fields.ParseSelector, verbatim).
 */
export const parsePredicate = (q: PredicateQuery): Either.Either<SelectionPredicate, BadRequest> => {
  const label =
    q.labelSelector === undefined || q.labelSelector === ""
      ? Either.right(Labels.everything)
      : Labels.parse(q.labelSelector)
  if (Either.isLeft(label)) return Either.left(newBadRequest(label.left))
  const field =
    q.fieldSelector === undefined || q.fieldSelector === ""
      ? Either.right(Fields.everything)
      : Fields.parseSelector(q.fieldSelector)
  if (Either.isLeft(field)) return Either.left(newBadRequest(field.left))
  if (q.supportedFields !== undefined) {
    const unsupported = field.right.terms.find((t) => !q.supportedFields!.includes(t.field))
    if (unsupported !== undefined)
      return Either.left(newBadRequest((q.unsupportedField ?? Fields.fieldLabelNotSupported)(unsupported.field)))
  }
  return Either.right({
    label: label.right,
    field: field.right,
    getAttrs: q.getAttrs ?? defaultAttrs,
    limit: q.limit ?? 0,
    continue: q.continue ?? "",
    allowWatchBookmarks: q.allowWatchBookmarks ?? false
  })
}
