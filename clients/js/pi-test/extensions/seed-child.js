// The child's own extension: the original's report() helper verbatim
// (seeds/002, "Child extension diagnostics"), called at factory load, in
// session_start and in session_shutdown. SEED_FLOOD=1 adds a duplicate and
// more reports than the 5-per-10 s window admits.

function report(pi, level, message, source) {
  // This synchronous, child-local probe identifies a LIVE manager host, not a
  // historical transcript marker. No listener in a normal top-level session.
  let hosted = false;
  pi.events.emit("pi-subagent-manager:diagnostic:probe", {
    respond: (capability) => { hosted = capability?.protocol === 1 && typeof capability.version === "string"; },
  });
  if (hosted) {
    pi.events.emit("pi-subagent-manager:diagnostic", { level, message, source });
  } else {
    // Retain your normal top-level reporting (e.g. ctx.ui.notify / stderr).
  }
}

export default function seedChild(pi) {
  report(pi, "warning", "lint config not found, using defaults", "lint");
  if (process.env.SEED_FLOOD) {
    report(pi, "warning", "lint config not found, using defaults", "lint"); // a duplicate
    for (let i = 1; i <= 6; i++) report(pi, "info", `flood ${i}`, "lint");
  }
  pi.on("session_start", () => {
    report(pi, "info", "session started \u202Ewith a Bidi override", "lint");
  });
  pi.on("session_shutdown", () => {
    report(pi, "error", "shutting down: \u001b[31mred\u001b[0m text", "lint");
  });
}
