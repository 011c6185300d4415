/**
 * A custom resource's kind in /openapi: its CRD version's structural schema with `apiVersion`,
 * `kind` and `metadata` (a reference to ObjectMeta) added, as apiextensions' OpenAPI builder
 * publishes it, so `kubectl explain widget.spec` prints its fields. A kind with no schema (a
 * built-in kind without a vendored definition) is an object that keeps unknown fields. Both are
 * tagged with their group/version/kind (`x-kubernetes-group-version-kind`, how kubectl finds them).
 */
import type { ResourceInfo } from "../resources.js"

export const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

const API_VERSION_DESCRIPTION =
  "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
const KIND_DESCRIPTION =
  "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"

/** A CRD kind's schema name: its group reversed, the version, the kind (com.example.v1.Widget) */
export const customSchemaName = (r: ResourceInfo, version: string): string =>
  `${r.group.split(".").reverse().join(".")}.${version}.${r.kind}`

const gvk = (r: ResourceInfo, version: string) => [{ group: r.group, kind: r.kind, version }]

/** The kind's schema; `ref` makes a reference to another schema of the document. */
export const customKindSchema = (
  r: ResourceInfo,
  version: string,
  ref: (name: string) => string
): Record<string, unknown> => {
  const crd = r.openAPISchemas?.[version]
  if (crd === undefined)
    return {
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
      "x-kubernetes-group-version-kind": gvk(r, version)
    }
  const { properties, ...rest } = structuredClone(crd) as { properties?: Record<string, unknown> }
  return {
    ...rest,
    type: "object",
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: "string" },
      kind: { description: KIND_DESCRIPTION, type: "string" },
      metadata: { description: METADATA_DESCRIPTION, allOf: [{ $ref: ref(OBJECT_META) }] },
      ...Object.fromEntries(
        Object.entries(properties ?? {}).filter(([k]) => k !== "apiVersion" && k !== "kind" && k !== "metadata")
      )
    },
    "x-kubernetes-group-version-kind": gvk(r, version)
  }
}
