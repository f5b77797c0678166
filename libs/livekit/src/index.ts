export * from './livekit.types.js';
export * from './room.client.js';
export * from './tokens.js';
export * from './webhook.verifier.js';
export * from './egress.client.js';
export * from './ingress.client.js';
