// The wire format, typed: what the kernel syncs (ArrayModel, FunctionModel) and the messages.
export * from "./array";
export * from "./function";
export * from "./messages";
export * from "./cost";
export * from "./shared";
export * from "./tree";
export * from "./search";
