export * from './config.js';
export * from './config.schema.js';
export * from './config.token.js';
export * from './redis.js';
