export * from './address-policy.js';
export * from './backoff.js';
export * from './delivery.js';
export * from './delivery-wake.js';
export * from './outbox.js';
export * from './secret-box.js';
export * from './signature.js';
export * from './stream-view.js';
