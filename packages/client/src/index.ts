/**
 * @since 0.1.0
 */
export * as ClientOptions from "./ClientOptions.ts"
export * as GatewayClient from "./GatewayClient.ts"
export * as RetryPolicy from "./RetryPolicy.ts"
export * as Switchyard from "./Switchyard.ts"
