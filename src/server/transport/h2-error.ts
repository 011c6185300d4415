/** An HTTP/2 connection error (RFC 9113 §5.4.1): the connection sends GOAWAY with `code` and closes. */
export class H2ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}
