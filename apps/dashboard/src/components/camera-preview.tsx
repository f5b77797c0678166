import { type ReactNode, useEffect, useState } from 'react';
import type { Api } from '../api/client.js';
import type { CameraToken, CameraView } from '@tally/contracts';
import { appPath } from '../pages/page-props.js';

const REFRESH_MS = 2_000;
const TOKEN_TTL_S = 600;

/**
 * The camera's latest frame, refreshed every two seconds. `<img>` cannot send the Authorization
 * header, so the page mints a short-lived viewer token for this camera: the app's key never appears
 * in a URL. A still frame does not count as a viewer.
 */
export function CameraPreview({ api, camera }: { api: Api; camera: CameraView }): ReactNode {
  const [token, setToken] = useState<CameraToken>();
  const [tick, setTick] = useState(0);
  const [failed, setFailed] = useState(false);
  const [missing, setMissing] = useState(false);

  useEffect(() => {
    let cancelled = false;
    let renew: ReturnType<typeof setTimeout> | undefined;
    const mint = (): void => {
      api.post<CameraToken>(appPath(camera.appId, `/cameras/${encodeURIComponent(camera.id)}/tokens`), { ttlS: TOKEN_TTL_S }).then(
        (minted) => {
          if (cancelled) return;
          setToken(minted);
          // A new token a minute before this one expires.
          renew = setTimeout(mint, Math.max(10_000, Date.parse(minted.expiresAt) - Date.now() - 60_000));
        },
        () => {
          if (!cancelled) setFailed(true);
        },
      );
    };
    mint();
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_MS);
    return () => {
      cancelled = true;
      clearTimeout(renew);
      clearInterval(timer);
    };
  }, [api, camera.appId, camera.id]);

  if (failed) return <span className="muted-text">no preview</span>;
  if (!token) return <span className="muted-text">…</span>;
  // Same-origin path (the dashboard is served by the API), with a counter so the browser fetches each new frame.
  const src = `${appPath(camera.appId, `/cameras/${encodeURIComponent(camera.id)}/frame.jpg`)}?token=${encodeURIComponent(token.token)}&n=${tick}`;
  // Until this API process holds a frame (404), the image stays hidden and is asked for again on the next tick.
  return (
    <>
      <img
        className="camera-preview"
        src={src}
        alt={`Latest frame of ${camera.name}`}
        width={160}
        hidden={missing}
        onLoad={() => setMissing(false)}
        onError={() => setMissing(true)}
      />
      {missing ? <span className="muted-text">no frame yet</span> : null}
    </>
  );
}
