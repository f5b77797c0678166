export * from './stream-room.js';
export * from './stream-lifecycle.js';
export * from './ingress.view.js';
export * from './ingress-lifecycle.js';
export * from './hls-lifecycle.js';
export * from './camera-lifecycle.js';
export * from './streams.providers.js';
