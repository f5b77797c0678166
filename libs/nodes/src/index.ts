export * from './node-registry.js';
export * from './pool.js';
export * from './node-workers.js';
