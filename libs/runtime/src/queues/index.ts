export * from './handles-job.js';
export * from './job-handler-check.js';
export * from './job-workers.js';
export * from './queues.module.js';
export * from './job-schedule.js';
export * from './scheduled-processor.js';
