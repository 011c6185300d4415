/**
 * etcd's v3 wire protocol for etcd-effect: the protos loaded at run time, service definitions and
 * client constructors for grpc-js, and the TypeScript shapes of the messages in both directions.
 */
export * from "./load.js"
export * from "./messages.js"
export * from "./services.js"
