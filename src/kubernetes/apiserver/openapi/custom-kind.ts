/**
 * A custom resource's kind in /openapi: its CRD version's structural schema with `apiVersion`,
 * `kind` and `metadata` (a reference to ObjectMeta) added, as apiextensions' OpenAPI builder
 * (buildKubeNative) publishes it, so `kubectl explain widget.spec` prints its fields. A kind with
 * no schema (a built-in kind without a vendored definition) is an object that keeps unknown
 * fields. Both are tagged with their group/version/kind (`x-kubernetes-group-version-kind`, how
 * kubectl finds them).
 */
import type { ResourceInfo } from "../resources.js"
import { V2_REF, V3_REF } from "./definitions.js"
import { toOpenAPIV2Schema } from "./v2-crd-schema.js"

export const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

const API_VERSION_DESCRIPTION =
  "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
const KIND_DESCRIPTION =
  "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"

/** A CRD kind's schema name: its group reversed, the version, the kind (com.example.v1.Widget) */
export const customSchemaName = (r: ResourceInfo, version: string): string =>
  `${r.group === "" ? "io.k8s.api.core" : r.group.split(".").reverse().join(".")}.${version}.${r.kind}`

const gvk = (r: ResourceInfo, version: string) => [{ group: r.group, kind: r.kind, version }]

/**
 * The kind's schema in a v3 document, or in the v2 one: there the schema is first made what v2
 * can express (v2-crd-schema.ts), metadata's reference carries its description beside it, and a
 * root that keeps unknown fields is a bare object (kubectl's v2 validation would refuse the rest).
 */
export const customKindSchema = (r: ResourceInfo, version: string, v2: boolean): Record<string, unknown> => {
  const crd = r.openAPISchemas?.[version] as Record<string, unknown> | undefined
  if (crd === undefined || (v2 && crd["x-kubernetes-preserve-unknown-fields"] === true))
    return {
      type: "object",
      ...(v2 ? {} : { "x-kubernetes-preserve-unknown-fields": true }),
      "x-kubernetes-group-version-kind": gvk(r, version)
    }
  const { properties, ...rest } = v2 ? toOpenAPIV2Schema(crd) : (structuredClone(crd) as Record<string, unknown>)
  const metadata = v2
    ? { description: METADATA_DESCRIPTION, $ref: V2_REF + OBJECT_META }
    : { description: METADATA_DESCRIPTION, allOf: [{ $ref: V3_REF + OBJECT_META }] }
  return {
    ...rest,
    type: "object",
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: "string" },
      kind: { description: KIND_DESCRIPTION, type: "string" },
      metadata,
      ...Object.fromEntries(
        Object.entries((properties ?? {}) as Record<string, unknown>).filter(
          ([k]) => k !== "apiVersion" && k !== "kind" && k !== "metadata"
        )
      )
    },
    "x-kubernetes-group-version-kind": gvk(r, version)
  }
}
