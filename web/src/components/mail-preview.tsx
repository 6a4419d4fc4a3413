import { getText } from '../api';
import { ErrorState, Loading, useLoad } from './state';

/**
 * Remote images and style sheets left out, as a mail client does before "show images": the
 * sent HTML carries the open pixel, and loading it here would record an open nobody made.
 */
function withoutRemoteLoads(html: string): { html: string; blocked: number } {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  let blocked = 0;
  const remote = (url: string | null) => url !== null && /^\s*(https?:)?\/\//i.test(url);
  for (const el of doc.querySelectorAll('img, source, input[type=image]')) {
    for (const attr of ['src', 'srcset']) {
      if (remote(el.getAttribute(attr))) { el.removeAttribute(attr); blocked++; }
    }
  }
  for (const el of doc.querySelectorAll('link[href]')) {
    if (remote(el.getAttribute('href'))) { el.remove(); blocked++; }
  }
  return { html: `<!doctype html>${doc.documentElement.outerHTML}`, blocked };
}

/**
 * A message rendered from its raw source (`GET /emails/{id}/raw`), parsed in the page by
 * postal-mime, which is loaded only here: what the recipient's client gets, tracked links
 * included. The HTML goes into a sandboxed frame (no scripts, no same-origin access).
 */
export function MailPreview({ id, title }: { id: string; title: string }) {
  const parsed = useLoad(async () => {
    const [{ default: PostalMime }, raw] = await Promise.all([import('postal-mime'), getText(`/emails/${encodeURIComponent(id)}/raw`)]);
    const email = await PostalMime.parse(raw.text);
    return { html: email.html ? withoutRemoteLoads(email.html) : null, text: email.text ?? null };
  }, [id]);
  if (parsed.error) return <ErrorState error={parsed.error} onRetry={parsed.reload} />;
  if (!parsed.data) return <Loading what="Rendering the message…" />;
  const { html, text } = parsed.data;
  if (!html) return <pre className="wrap" aria-label={title}>{text ?? ''}</pre>;
  return (
    <>
      {html.blocked > 0 && <p className="muted">Remote images are not loaded here, so viewing records no open.</p>}
      <iframe title={title} sandbox="" srcDoc={html.html} className="mail-frame" />
    </>
  );
}
