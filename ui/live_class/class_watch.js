// A student's class watch (ui/lessons/class_watch.py): asks the server for her class's version, naming the one her
// page was drawn at (serving/class_version.py: a plain GET, no script run, held by the server until the class
// changes), `every_ms` after each answer, and reruns the fragment it is drawn in (a trigger value) only when the
// version differs from the one her page was drawn at. If the route cannot be asked (no seat cookie, a proxy that
// blocks it, a server without it), it reruns the fragment every `fallback_ms` instead: the class poll of before, so a
// page never stops following its class.
// Streamlit calls this function at the first draw and again at each run of the fragment, not always on the same
// parent element and not always with a cleanup in between: so there is one watch per element key (data.key), whatever
// element it is drawn in now, and one chain of asks per watch. The chain ends when its element has left the page, or
// with the cleanup of the latest call. A cleanup of an earlier call can come after a later call, on the same element
// (Streamlit's BidiComponent cleans up a call whose draw was superseded while it loaded, once it has returned): it
// is let go, or two quick redraws would end the chain and her page would stop following the class.
const watches = new Map();
const VERSION = /^([0-9a-f]{16}|ended)$/;

async function ask(key) {
  const watch = watches.get(key);
  watch.timer = null;
  if (watch.stopped || !watch.element.isConnected) {
    watches.delete(key);
    return;
  }
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
  if (watch.stopped || watches.get(key) !== watch) return;
  if (now === null) {
    watch.trigger("changed", `poll ${Date.now()}`);
    watch.timer = setTimeout(ask, watch.fallback, key);
    return;
  }
  if (now !== watch.version && now !== watch.asked) {
    watch.asked = now;
    watch.trigger("changed", now);
  }
  watch.timer = setTimeout(ask, watch.every, key);
}

export default function ({ data, parentElement, setTriggerValue }) {
  let watch = watches.get(data.key);
  if (watch === undefined) {
    watch = { timer: null, asked: null, request: null, calls: 0 };
    watches.set(data.key, watch);
  }
  const call = ++watch.calls;
  // the page was drawn at data.version: a version already asked for is only asked again once it changes
  if (watch.version !== data.version) watch.asked = null;
  Object.assign(watch, { version: data.version, url: data.url, every: data.every_ms, fallback: data.fallback_ms,
                         trigger: setTriggerValue, element: parentElement, stopped: false });
  if (!watch.chained) {
    watch.chained = true; // the chain's first ask; every later one is scheduled by ask() itself
    watch.timer = setTimeout(ask, watch.every, data.key);
  }
  return () => {
    if (watch.calls !== call) return; // an earlier call's cleanup, after a later call: the chain goes on
    watch.stopped = true;
    clearTimeout(watch.timer);
    if (watch.request) watch.request.abort(); // a held request is let go with the element
    watches.delete(data.key);
  };
}
