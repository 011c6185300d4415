/**
 * A call's metadata from its request header list, as grpc-js' handlers read it (`call.metadata`) —
 * grpc-go's metadata decoding in http2_server.go's operateHeaders (http_util.go's
 * decodeMetadataHeader): pseudo-headers and transport fields left out, `-bin` values base64-decoded.
 */
import * as grpc from "@grpc/grpc-js"
import type { HeaderList } from "../../h2/hpack.js"

/** header names that are transport, not call metadata (grpc-js leaves these out too) */
const RESERVED = new Set(["te", "content-type", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding"])

export const callMetadata = (h: HeaderList): grpc.Metadata => {
  const md = new grpc.Metadata()
  for (let i = 0; i < h.length; i += 2) {
    const name = h[i]!
    if (name.charCodeAt(0) === 58 /* ':' */ || RESERVED.has(name)) continue
    try {
      if (name.endsWith("-bin")) md.add(name, Buffer.from(h[i + 1]!, "base64"))
      else md.add(name, h[i + 1]!)
    } catch {
      // a key grpc-js refuses: left out, as grpc-js leaves it out
    }
  }
  return md
}
