export * from './node-registry.js';
export * from './pool.js';
