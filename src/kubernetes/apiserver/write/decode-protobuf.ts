/**
 * `application/vnd.kubernetes.protobuf` request bodies (what typed clients such as client-go and
 * `kubectl create secret|configmap|namespace` send): the `k8s\0` prefix, the runtime.Unknown
 * envelope, and the kind's message from k8s.io/api's generated.proto turned into the JSON document
 * the rest of the pipeline decodes, as Go sees the object after unmarshalling it
 * (src/kubernetes/api/protobuf). An envelope without apiVersion or kind takes the endpoint's; a
 * kind with no message is the scheme's "no kind … is registered"; a custom resource cannot be
 * decoded from protobuf (unstructured has no protobuf form). Protobuf has no strict mode.
 */
import { Either } from "effect"
import { decodeProtobuf, PROTOBUF_TYPE } from "../../api/protobuf/envelope.js"
import type { BodyDecoder } from "./body-decoder.js"

export const protobufDecoder: BodyDecoder = {
  mediaTypes: [PROTOBUF_TYPE],
  decode: (bytes, into) =>
    Either.match(decodeProtobuf(bytes, into), {
      onLeft: (e) => Either.left(e.gvk === undefined ? e.message : { message: e.message, gvk: e.gvk }),
      onRight: (value) => Either.right({ value, strict: [], offsets: new Map() })
    })
}
