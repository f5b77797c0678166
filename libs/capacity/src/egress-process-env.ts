/**
 * The environment of every LiveKit egress process beyond where it runs (PATH, HOME, …). The
 * service starts one `egress run-handler` process per recording (two per passthrough recording)
 * and passes its own environment on, so this is also what each recording's handler runs with.
 */
export const EGRESS_PROCESS_ENV: Readonly<Record<string, string>> = Object.freeze({
  // GStreamer's errors only.
  GST_DEBUG: '1',
});
