// A student's discussion countdown (ui/lessons/countdown.py), counted down in her browser: her page's script does not
// run once a second for it (150 runs a second per replica for a class of 300 in a discussion). The server gives the
// seconds left when it drew the page (`left_ms`, from the stored end: her phone's clock is never asked) and the words;
// the text is set with textContent only. Streamlit calls this at each draw of the element, not always on the same
// parent element: one countdown per key (the class's stored end), its deadline fixed at its first draw. Only the
// latest call's cleanup ends it (an earlier call's can come after a later one: ui/lessons/class_watch.js).
const countdowns = new Map();

function clock(ms) {
  const whole = Math.max(0, Math.ceil(ms / 1000)); // 0.2 s left still reads 0:01, never 0:00 before the end
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

function tick(key) {
  const countdown = countdowns.get(key);
  if (countdown === undefined) return;
  countdown.timer = null;
  if (!countdown.element.isConnected) {
    countdowns.delete(key);
    return;
  }
  const left = countdown.deadline - performance.now();
  const [before, after] = countdown.words.left.split("{time}");
  const text = left > 0 ? `${before}${clock(left)}${after ?? ""}` : countdown.words.up;
  const line = countdown.element.querySelector(".countdown") ?? countdown.element.appendChild(
    document.createElement("p"));
  line.className = left > 0 ? "countdown" : "countdown up";
  line.setAttribute("role", "timer");
  if (line.textContent !== text) line.textContent = text;
  if (left > 0) countdown.timer = setTimeout(tick, Math.min(1000, (left % 1000) || 1000), key);
}

export default function ({ data, parentElement }) {
  let countdown = countdowns.get(data.key);
  if (countdown === undefined) {
    countdown = { deadline: performance.now() + data.left_ms, timer: null, calls: 0 };
    countdowns.set(data.key, countdown);
  }
  const call = ++countdown.calls;
  Object.assign(countdown, { words: { left: data.left, up: data.up }, element: parentElement });
  clearTimeout(countdown.timer);
  tick(data.key);
  return () => {
    if (countdown.calls !== call) return; // an earlier call's cleanup, after a later call: it goes on
    clearTimeout(countdown.timer);
    countdowns.delete(data.key);
  };
}
