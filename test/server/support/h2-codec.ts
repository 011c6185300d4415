/**
 * The HTTP/2 frame and HPACK code the hostile-peer tests build their raw client on, from one
 * place: src/h2/ (shared by the bench's client and the server's lean transport).
 */
export { Flag, FRAME_HEADER, FrameType, PREFACE, Setting, errorName, writeFrameHeader } from "../../../src/h2/frames.js"
export { FrameReader, type FrameSink } from "../../../src/h2/frame-reader.js"
export { grpcRequestHeaderBlock, HpackDecoder } from "../../../src/h2/hpack.js"
