// The guides' stylesheet, in the look of Scalar's default theme (its colours, system fonts, a sidebar), and the bar the
// reference pages show above Scalar. A string rather than a file beside this module: the running service is bundled
// into dist/ (app/start.mjs), where no file beside the module would be found.
export const GUIDES_STYLESHEET = `:root {
  --guides-color-1: #2a2f45;
  --guides-color-2: #757575;
  --guides-accent: #0099ff;
  --guides-background-1: #fff;
  --guides-background-2: #f6f6f6;
  --guides-background-3: #e7e7e7;
  --guides-border: rgba(0, 0, 0, 0.1);
  --guides-font: system-ui, -apple-system, 'Segoe UI', Roboto, Oxygen, Ubuntu, Cantarell, 'Open Sans', 'Helvetica Neue', sans-serif;
  --guides-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace;
  --docs-bar-height: 40px;
  /* Scalar keeps its sticky sidebar and header below a custom header of this height. */
  --scalar-custom-header-height: var(--docs-bar-height);
}
@media (prefers-color-scheme: dark) {
  body.guides {
    --guides-color-1: rgba(255, 255, 255, 0.9);
    --guides-color-2: rgba(255, 255, 255, 0.62);
    --guides-accent: #3ea6ff;
    --guides-background-1: #0f0f0f;
    --guides-background-2: #1a1a1a;
    --guides-background-3: #272727;
    --guides-border: rgba(255, 255, 255, 0.1);
  }
}
body.guides {
  margin: 0;
  display: grid;
  grid-template-columns: 280px minmax(0, 1fr);
  min-height: 100vh;
  font: 16px/1.6 var(--guides-font);
  color: var(--guides-color-1);
  background: var(--guides-background-1);
}
.guides a { color: var(--guides-accent); text-decoration: none; }
.guides a:hover { text-decoration: underline; }
.guides-nav {
  position: sticky;
  top: 0;
  height: 100vh;
  overflow-y: auto;
  box-sizing: border-box;
  padding: 20px 12px;
  font-size: 14px;
  background: var(--guides-background-2);
  border-right: 1px solid var(--guides-border);
}
.guides-home { display: block; padding: 4px 8px 12px; font-weight: 600; font-size: 16px; color: var(--guides-color-1) !important; }
.guides-nav-heading { margin: 16px 8px 4px; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; color: var(--guides-color-2); }
.guides-nav ul { list-style: none; margin: 0; padding: 0; }
.guides-nav li a { display: block; padding: 5px 8px; border-radius: 6px; color: var(--guides-color-1); }
.guides-nav li a:hover { background: var(--guides-background-3); text-decoration: none; }
.guides-nav a[aria-current='page'] { background: var(--guides-background-3); font-weight: 600; }
.guide { max-width: 820px; padding: 32px 48px 96px; box-sizing: border-box; }
.guide h1, .guide h2, .guide h3, .guide h4 { position: relative; line-height: 1.3; margin: 1.6em 0 0.6em; }
.guide h1 { font-size: 2em; margin-top: 0.4em; }
.guide h2 { font-size: 1.45em; padding-bottom: 0.3em; border-bottom: 1px solid var(--guides-border); }
.guide h3 { font-size: 1.15em; }
.guide .anchor { position: absolute; left: -1em; width: 1em; color: var(--guides-color-2); opacity: 0; }
.guide h1:hover .anchor, .guide h2:hover .anchor, .guide h3:hover .anchor, .guide h4:hover .anchor, .guide .anchor:focus { opacity: 1; text-decoration: none; }
.guide code { font: 0.875em var(--guides-font-code); background: var(--guides-background-2); border-radius: 4px; padding: 0.15em 0.35em; }
.guide pre { background: var(--guides-background-2); border: 1px solid var(--guides-border); border-radius: 8px; padding: 12px 16px; overflow-x: auto; line-height: 1.45; }
.guide pre code { background: none; padding: 0; font-size: 0.85em; }
.guide table { border-collapse: collapse; margin: 1em 0; display: block; overflow-x: auto; font-size: 0.94em; }
.guide th, .guide td { border: 1px solid var(--guides-border); padding: 6px 12px; text-align: left; vertical-align: top; }
.guide th { background: var(--guides-background-2); }
.guide blockquote { margin: 1em 0; padding: 0 1em; color: var(--guides-color-2); border-left: 4px solid var(--guides-background-3); }
@media (max-width: 800px) {
  body.guides { display: block; }
  .guides-nav { position: static; height: auto; border-right: 0; border-bottom: 1px solid var(--guides-border); }
  .guide { padding: 24px 20px 64px; }
}
.docs-bar {
  position: sticky;
  top: 0;
  z-index: 1000;
  display: flex;
  gap: 20px;
  align-items: center;
  height: var(--docs-bar-height);
  box-sizing: border-box;
  padding: 0 16px;
  font: 14px var(--guides-font);
  /* Scalar's own colours where it has set them, so the bar follows its light and dark modes. */
  background: var(--scalar-background-2, var(--guides-background-2));
  border-bottom: 1px solid var(--scalar-border-color, var(--guides-border));
}
.docs-bar a { color: var(--scalar-color-1, var(--guides-color-1)); text-decoration: none; }
.docs-bar a:hover { color: var(--scalar-color-accent, var(--guides-accent)); }
.docs-bar a[aria-current='page'] { font-weight: 600; }
body:has(> .docs-bar) { margin: 0; }
`;
