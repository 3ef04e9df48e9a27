/**
 * URLs the edge hands back (`status_url`, `Location`) are built from configuration
 * only: a Host header is the client's to set, and echoing it lets anyone point a
 * cached or forwarded answer elsewhere.
 */
/** Refuses at start-up a base URL that is not an absolute http(s) URL, rather than hand out broken links. */
export function checkPublicBaseUrl(publicBaseUrl: string | undefined): void {
  if (publicBaseUrl === undefined) return;
  const url = URL.canParse(publicBaseUrl) ? new URL(publicBaseUrl) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new Error(`publicBaseUrl must be an absolute http(s) URL without query or fragment, got "${publicBaseUrl}"`);
  }
}

export function requestStatusUrl(publicBaseUrl: string | undefined, id: string): string {
  const path = `/v1/requests/${encodeURIComponent(id)}`;
  return publicBaseUrl ? `${publicBaseUrl.replace(/\/+$/, '')}${path}` : path;
}
