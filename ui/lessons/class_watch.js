// A student's class watch (ui/lessons/class_watch.py): asks the server for her class's version, naming the one her
// page was drawn at (serving/class_version.py: a plain GET, no script run, held by the server until the class
// changes), `every_ms` after each answer, and reruns the fragment it is drawn in (a trigger value) only when the
// version differs from the one her page was drawn at. If the route cannot be asked (no seat cookie, a
// proxy that blocks it, a server without it), it reruns the fragment every `fallback_ms` instead: the class poll of
// before, so a page never stops following its class.
// Streamlit calls this function at the first draw and again with each new `data` (a fragment run), with no cleanup
// in between: one watch per mounted element, kept in `watches`; the cleanup runs when the element leaves the page.
const watches = new WeakMap();
const VERSION = /^([0-9a-f]{16}|ended)$/;

export default function ({ data, parentElement, setTriggerValue }) {
  let watch = watches.get(parentElement);
  if (watch === undefined) {
    watch = { timer: null, asked: null, stopped: false };
    watches.set(parentElement, watch);
  }
  // the page was drawn at data.version: a version already asked for is only asked again once it changes
  if (watch.version !== data.version) watch.asked = null;
  Object.assign(watch, { version: data.version, url: data.url, every: data.every_ms, fallback: data.fallback_ms,
                         trigger: setTriggerValue });

  const tick = async () => {
    if (watch.stopped) return;
    let now = null;
    try {
      const url = new URL(watch.url, document.baseURI);
      url.searchParams.set("seen", watch.asked ?? watch.version);
      watch.request = new AbortController();
      const response = await fetch(url, { cache: "no-store", credentials: "same-origin",
                                          signal: watch.request.signal });
      const text = (await response.text()).trim();
      // a version is 16 hex digits or "ended" (classroom/recent.class_version); anything else (a server without the
      // route answers its index page) is no answer, and the fragment polls instead
      if (response.ok && VERSION.test(text)) now = text;
    } catch (error) {
      now = null; // offline for a moment, or the route is not there: the fallback below
    }
    if (watch.stopped) return;
    if (now === null) {
      watch.trigger("changed", `poll ${Date.now()}`);
      watch.timer = setTimeout(tick, watch.fallback);
      return;
    }
    if (now !== watch.version && now !== watch.asked) {
      watch.asked = now;
      watch.trigger("changed", now);
    }
    watch.timer = setTimeout(tick, watch.every);
  };
  if (watch.timer === null) watch.timer = setTimeout(tick, watch.every);
  return () => {
    watch.stopped = true;
    clearTimeout(watch.timer);
    if (watch.request) watch.request.abort(); // a held request is let go with the element
    watches.delete(parentElement);
  };
}
