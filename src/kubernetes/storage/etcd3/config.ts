/**
 * What one etcd3 store needs to know (storagebackend.Config + the registry's store options).
 * Keys given to the Storage are relative to `pathPrefix` ("/pods/ns/name" under
 * "/registry" is the etcd key "/registry/pods/ns/name").
 */
import type { KubeObject } from "../../api/object-meta.js"
import type { GroupResource } from "../../api/status.js"
import type { AttrFunc } from "../selection-predicate.js"
import type { ValueTransformer } from "../value/transformer.js"

/** An etcd3 storage's configuration: prefixes, group resource, transformer, attrs, bookmark type and paging. */
export interface Etcd3StoreConfig {
  /** etcd key prefix of all objects (storagebackend.Config.Prefix), default "/registry" */
  readonly pathPrefix?: string | undefined
  /** every key must start with it ("lacks resource prefix"), e.g. "/pods" */
  readonly resourcePrefix: string
  /** the resource, for error messages: pods "foo" not found */
  readonly groupResource: GroupResource
  /** encryption at rest; default identity that refuses encrypted data (the apiserver's default) */
  readonly transformer?: ValueTransformer | undefined
  /** labels and fields of an object for predicates; default metadata.name / metadata.namespace */
  readonly getAttrs?: AttrFunc | undefined
  /** apiVersion/kind of the BOOKMARK objects (newFunc) */
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string } | undefined
  /** a hook called before an object is stored (e.g. to default fields); default none */
  readonly newObject?: ((obj: KubeObject) => KubeObject) | undefined
}
