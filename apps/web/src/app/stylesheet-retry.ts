// A page's code loads when the page is first opened (React.lazy), its stylesheet first. When the stylesheet does not
// load (a dropped connection, a proxy hiccup, a loaded server), Vite rejects the whole import and the page shows an
// error for want of its styles. Instead the page loads, and its stylesheet is asked for once more. A chunk's script
// that fails still fails (PageErrorBoundary shows it).

const CSS_FAILURE = /^Unable to preload CSS for (\S+)$/;

/** Handles Vite's `vite:preloadError` events on `win` for stylesheets; scripts are left to fail. */
export function retryFailedStylesheets(win: Window): void {
  win.addEventListener('vite:preloadError', (event) => {
    const failure: unknown = (event as Event & { payload?: unknown }).payload;
    const href = CSS_FAILURE.exec(failure instanceof Error ? failure.message : '')?.[1];
    if (href === undefined) return;
    event.preventDefault();
    const link = win.document.createElement('link');
    link.rel = 'stylesheet';
    link.crossOrigin = ''; // as Vite's own link
    link.href = href;
    win.document.head.append(link);
  });
}
