/**
 * The `paths` of a group/version's OpenAPI document: for each resource, the PATCH operation of
 * one object, tagged with its group/version/kind. kubectl reads three things there: explain finds
 * the kind of a resource by its path (`/api/v1/namespaces/{namespace}/configmaps/{name}`), apply
 * computes a strategic merge patch from the schemas only when the operation's `requestBody` lists
 * `application/strategic-merge-patch+json` (else it builds it from its compiled-in types, or a
 * merge patch), and create/apply send `fieldValidation` when the operation has that parameter.
 */
import { patchMediaTypes } from "../handlers/patch.js"
import type { ResourceInfo } from "../resources.js"
import { V3_REF } from "./definitions.js"

export const PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"

/** meta/v1's Patch, the schema of every PATCH body (not among the vendored definitions: no kind refers to it) */
export const PATCH_SCHEMA = {
  description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
  type: "object"
}

const query = (name: string, type: "string" | "boolean" = "string") => ({
  name,
  in: "query",
  schema: { type, uniqueItems: true }
})

/** The path of one object of `r` and its PATCH operation, in the document of `gvPath` ("api/v1"). */
export const objectPath = (r: ResourceInfo, gvPath: string, version: string): [string, unknown] => {
  const ns = r.namespaced ? "namespaces/{namespace}/" : ""
  const body = { schema: { $ref: V3_REF + PATCH } }
  return [
    `/${gvPath}/${ns}${r.plural}/{name}`,
    {
      patch: {
        description: `partially update the specified ${r.kind}`,
        "x-kubernetes-group-version-kind": { group: r.group, version, kind: r.kind },
        "x-kubernetes-action": "patch",
        parameters: [query("dryRun"), query("fieldManager"), query("fieldValidation")],
        requestBody: {
          // Go's map of media types: in key order, as Kubernetes publishes it
          content: Object.fromEntries([...patchMediaTypes(r.strategicMergePatch)].sort().map((t) => [t, body])),
          required: true
        },
        responses: { "200": { description: "OK" } }
      }
    }
  ]
}
