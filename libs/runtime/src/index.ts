export * from './clock.js';
export * from './egress-stop-requests.js';
export * from './redis-connection.js';
export * from './runtime.module.js';
export * from './logging.js';
export * from './queues/index.js';
export * from './cache-invalidation.js';
