export * from './ids.js';
export * from './errors.js';
export * from './apps.js';
export * from './keys.js';
export * from './streams.js';
export * from './health.js';
export * from './jobs.js';
