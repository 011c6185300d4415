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

export interface BodyDecoder {
  /** the media types it reads (Content-Type without parameters) */
  readonly mediaTypes: ReadonlyArray<string>
  /** the document, or the decoder's error text (reported as the apiserver reports a decode error) */
  readonly decode: (bytes: Uint8Array) => Either.Either<DecodedDocument, string>
}
