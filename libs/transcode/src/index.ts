export * from './ladder.js';
export * from './command.js';
export * from './master-playlist.js';
