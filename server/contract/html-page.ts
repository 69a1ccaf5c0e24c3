// The frame every docs page shares, a guide's or a reference's: one document head (its title, the viewport, one
// stylesheet) around the page's own body.
export function htmlPage({
  title,
  stylesheet,
  bodyClass,
  body,
}: {
  title: string;
  stylesheet: string;
  bodyClass?: string;
  body: string;
}): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${escapeHtml(stylesheet)}" />
  </head>
  <body${bodyClass ? ` class="${escapeHtml(bodyClass)}"` : ''}>
${body}
  </body>
</html>
`;
}

/** For text and attributes in either quotes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
