/**
 * The HTTP/2 frame and HPACK code the hostile-peer tests build their raw client on, from one
 * place: src/bench/h2 today (it moves to src/h2/ with the lean transport; only these lines change).
 */
export {
  Flag,
  FRAME_HEADER,
  FrameType,
  PREFACE,
  Setting,
  errorName,
  writeFrameHeader
} from "../../../src/bench/h2/frames.js"
export { FrameReader, type FrameSink } from "../../../src/bench/h2/frame-reader.js"
export { grpcRequestHeaderBlock, HpackDecoder } from "../../../src/bench/h2/hpack.js"
