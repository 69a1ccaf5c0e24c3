// The minimal server-rendered sign-in and consent page of the authorize endpoint. Every value is escaped; the
// page has no script, and helmet's default headers forbid framing it (clickjacking).
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export interface LoginPage {
  clientName: string;
  /** Scope → what it lets the app do. */
  scopes: Array<[string, string]>;
  /** The authorization request's parameters, carried through the form unchanged. */
  params: Record<string, string>;
  email?: string;
  error?: string;
}

export function renderLoginPage(page: LoginPage): string {
  const hidden = Object.entries(page.params)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('\n      ');
  const scopes = page.scopes
    .map(([scope, what]) => `<li><code>${escape(scope)}</code> ${escape(what)}</li>`)
    .join('\n        ');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in · Study Companion</title>
  <style>
    body { font-family: system-ui, sans-serif; max-width: 26rem; margin: 3rem auto; padding: 0 1rem; color: #1f2328; }
    label { display: block; margin: .75rem 0 .25rem; }
    input[type=email], input[type=password] { width: 100%; padding: .5rem; box-sizing: border-box; }
    .error { color: #b42318; } button { margin: 1rem .5rem 0 0; padding: .5rem 1rem; }
  </style>
</head>
<body>
  <h1>Sign in</h1>
  <p><strong>${escape(page.clientName)}</strong> asks to act for you with these permissions:</p>
  <ul>
        ${scopes}
  </ul>
  ${page.error ? `<p class="error" role="alert">${escape(page.error)}</p>` : ''}
  <form method="post" action="/oauth/authorize">
      ${hidden}
    <label for="email">E-mail</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${escape(page.email ?? '')}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit" name="decision" value="allow">Sign in and allow</button>
    <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
  </form>
</body>
</html>`;
}

export function renderErrorPage(message: string, heading = 'This sign-in link is not valid'): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization error · Study Companion</title></head>
<body><h1>${escape(heading)}</h1><p>${escape(message)}</p></body></html>`;
}
