/**
 * The environment of every LiveKit egress process beyond where it runs (PATH, HOME, …). Track
 * egresses (passthrough, audio-only recordings) run inside the egress service process
 * (docs/adr/0048-track-egress-in-the-egress-process.md); composite ones each get an
 * `egress run-handler` process, to which the service passes its own environment on.
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
