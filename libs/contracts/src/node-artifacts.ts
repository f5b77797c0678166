import { z } from 'zod';

/** A file name the origin serves to joining nodes: one path segment, no dot first. */
export const NodeArtifactName = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a file name: letters, digits and . _ - (not starting with . _ or -)');

/** One built file an origin offers the nodes that join it (`./install.sh --join` fetches what its role needs). */
export const NodeArtifact = z
  .object({
    name: NodeArtifactName,
    /** binary: a LiveKit binary (livekit-server, egress, ingress); runtime: a pinned runtime's registry download; bundle: the built services (dist.tar.gz) or the dashboard's build (dashboard.tar.gz). */
    kind: z.enum(['binary', 'runtime', 'bundle']),
    /** What it was built from: a binary's build stamp, a runtime's pin, the bundle's source hash. A node takes the file only when it wants this exact version. */
    version: z
      .string()
      .max(300)
      .regex(/^[A-Za-z0-9 ._:=+@/-]*$/, 'letters, digits, spaces and . _ : = + @ / -'),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
  })
  .meta({ id: 'NodeArtifact' });
export type NodeArtifact = z.infer<typeof NodeArtifact>;

/** What the origin has built for its own platform; written by its installer. */
export const NodeArtifacts = z
  .object({
    /** `linux-amd64` or `linux-arm64`: a node of another platform builds everything itself. */
    platform: z.string().regex(/^linux-[a-z0-9]+$/),
    files: z.array(NodeArtifact),
  })
  .meta({ id: 'NodeArtifacts' });
export type NodeArtifacts = z.infer<typeof NodeArtifacts>;

export const NodeArtifactParams = z.strictObject({ name: NodeArtifactName });
export type NodeArtifactParams = z.infer<typeof NodeArtifactParams>;
