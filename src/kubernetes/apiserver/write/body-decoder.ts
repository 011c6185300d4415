/**
 * The shape of one content type's reader of request bodies (decode.ts lists them: JSON, YAML,
 * decode-protobuf.ts), apart from decode.ts so that a decoder does not import the list it is in.
 */
import type { Either } from "effect"

/** A body as a JSON document, with what a strict decoder objects to besides unknown fields. */
export interface DecodedDocument {
  readonly value: unknown
  /** strict violations found while reading (duplicate keys), each with its place in the document */
  readonly strict: ReadonlyArray<{ readonly offset: number; readonly text: string }>
  /** the offset of each key by rendered path (unknown fields are put in document order with it) */
  readonly offsets: ReadonlyMap<string, number>
}

/** What the endpoint decodes into: its apiVersion and kind (a body's defaults), and whether it is a custom resource. */
export interface DecodeInto {
  readonly apiVersion: string
  readonly kind: string
  readonly custom: boolean
}

/**
 * A decoder's error: its text, and the apiVersion and kind it had read when the error came after
 * them (transformDecodeError then says `<Kind> in version "<v>" cannot be handled as a …`).
 */
export type DecodeFailure =
  string | { readonly message: string; readonly gvk: { readonly apiVersion: string; readonly kind: string } }

export interface BodyDecoder {
  /** the media types it reads (Content-Type without parameters) */
  readonly mediaTypes: ReadonlyArray<string>
  /** the document, or the decoder's error (reported as the apiserver reports a decode error) */
  readonly decode: (bytes: Uint8Array, into: DecodeInto) => Either.Either<DecodedDocument, DecodeFailure>
}
