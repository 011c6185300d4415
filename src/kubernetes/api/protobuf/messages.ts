/**
 * The protobuf messages of the kinds served in `application/vnd.kubernetes.protobuf`: k8s.io/api's
 * and k8s.io/apimachinery's generated.proto (proto/k8s.io/…, vendored; docs/decisions.md), loaded
 * on first use from the build's compiled JSON (src/proto/compile.ts) or parsed. A kind is
 * protobuf-capable by having a row in `MESSAGES` (apiVersion and kind → message): the built-in
 * kinds, their lists, and meta.k8s.io's Status, WatchEvent and PartialObjectMetadata(List).
 * Custom resources have none (as in the apiserver: "CRDs explicitly do not support protobuf").
 */
import type protobufjs from "protobufjs"
import { k8sProtos, parseProtos, readCompiled } from "../../../proto/compile.js"
import { protoDir } from "../../../proto/load.js"

const CORE = "k8s.io.api.core.v1"
const META = "k8s.io.apimachinery.pkg.apis.meta.v1"

/** `${apiVersion}/${kind}` → the message's full name (the kind's Go type's twin in generated.proto) */
const MESSAGES: Readonly<Record<string, string>> = {
  "v1/ConfigMap": `${CORE}.ConfigMap`,
  "v1/ConfigMapList": `${CORE}.ConfigMapList`,
  "v1/Secret": `${CORE}.Secret`,
  "v1/SecretList": `${CORE}.SecretList`,
  "v1/Namespace": `${CORE}.Namespace`,
  "v1/NamespaceList": `${CORE}.NamespaceList`,
  "v1/Event": `${CORE}.Event`,
  "v1/EventList": `${CORE}.EventList`,
  "coordination.k8s.io/v1/Lease": "k8s.io.api.coordination.v1.Lease",
  "coordination.k8s.io/v1/LeaseList": "k8s.io.api.coordination.v1.LeaseList",
  "events.k8s.io/v1/Event": "k8s.io.api.events.v1.Event",
  "events.k8s.io/v1/EventList": "k8s.io.api.events.v1.EventList",
  // the access reviews (authorization/access-review.ts) and kubectl auth whoami's SelfSubjectReview
  ...Object.fromEntries(
    ["SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview", "LocalSubjectAccessReview"].map(
      (k) => [`authorization.k8s.io/v1/${k}`, `k8s.io.api.authorization.v1.${k}`]
    )
  ),
  "authentication.k8s.io/v1/SelfSubjectReview": "k8s.io.api.authentication.v1.SelfSubjectReview",
  // metav1.Status is served as "v1" in the core group and as "meta.k8s.io/v1"
  "v1/Status": `${META}.Status`,
  "meta.k8s.io/v1/Status": `${META}.Status`,
  "meta.k8s.io/v1/PartialObjectMetadata": `${META}.PartialObjectMetadata`,
  "meta.k8s.io/v1/PartialObjectMetadataList": `${META}.PartialObjectMetadataList`,
  // metav1beta1's are metav1's types
  "meta.k8s.io/v1beta1/PartialObjectMetadata": `${META}.PartialObjectMetadata`,
  "meta.k8s.io/v1beta1/PartialObjectMetadataList": `${META}.PartialObjectMetadataList`
}

/** Whether objects of this apiVersion and kind have a protobuf message (no proto is loaded). */
export const hasMessage = (apiVersion: string, kind: string): boolean => `${apiVersion}/${kind}` in MESSAGES

let root: protobufjs.Root | undefined

/** The Kubernetes protos, loaded on the first call (~75 ms from the compiled JSON; types resolve on use). */
export const k8sRoot = (): protobufjs.Root =>
  (root ??= readCompiled(protoDir, k8sProtos) ?? parseProtos(protoDir, k8sProtos))

const types = new Map<string, protobufjs.Type>()

/** A message by full name (`k8s.io.api.core.v1.ConfigMap`). */
export const lookupMessage = (fullName: string): protobufjs.Type => {
  let t = types.get(fullName)
  if (t === undefined) {
    t = k8sRoot().lookupType(fullName)
    types.set(fullName, t)
  }
  return t
}

/** meta/v1's options, registered in every group version (metav1.AddToGroupVersion) */
const OPTIONS = new Set(["DeleteOptions"])

/** The message of an apiVersion and kind, if it has one. */
export const messageOf = (apiVersion: string, kind: string): protobufjs.Type | undefined => {
  const name = MESSAGES[`${apiVersion}/${kind}`] ?? (OPTIONS.has(kind) ? `${META}.${kind}` : undefined)
  return name === undefined ? undefined : lookupMessage(name)
}

export const UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
export const WATCH_EVENT = `${META}.WatchEvent`
