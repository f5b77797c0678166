/**
 * The environment of every LiveKit egress process beyond where it runs (PATH, HOME, …). The
 * service starts one `egress run-handler` process per recording (two per passthrough recording)
 * and passes its own environment on, so this is also what each recording's handler runs with.
 * Nearly all of a handler's memory is its own (docs/capacity.md, "what a passthrough recording's
 * memory is made of"): what is set here is paid once per handler.
 */
export const EGRESS_PROCESS_ENV: Readonly<Record<string, string>> = Object.freeze({
  // GStreamer's errors only.
  GST_DEBUG: '1',
  // The Go heap is the largest part of a handler. Go lets it grow to twice what survived the last
  // collection before collecting again; 25 lets it grow by a quarter, for some more CPU spent
  // collecting. No GOMEMLIMIT: a soft limit below what a handler holds live would have Go collect
  // without pause.
  GOGC: '25',
  // glibc gives each thread that allocates an arena of its own (up to 8 per core), and GStreamer's
  // streaming threads each kept one mostly empty; two arenas hold the same allocations.
  MALLOC_ARENA_MAX: '2',
  // GLib 2.74's slice allocator (GStreamer 1.22 allocates buffers and events through it) keeps
  // freed blocks in per-thread magazines; plain malloc instead, as GLib does from 2.76 on.
  G_SLICE: 'always-malloc',
});
