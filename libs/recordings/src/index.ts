export * from './finalise.queue.js';
export * from './recording-files.js';
export * from './recording-lifecycle.js';
export * from './recording.view.js';
export * from './recording.providers.js';
export * from './ladder/ladder.queue.js';
export * from './ladder/ladder-lifecycle.js';
