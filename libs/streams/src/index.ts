export * from './stream-room.js';
export * from './stream-lifecycle.js';
export * from './ingress.view.js';
export * from './ingress-lifecycle.js';
export * from './streams.providers.js';
