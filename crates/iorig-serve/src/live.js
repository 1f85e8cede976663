// The live view of a run: every interval of the run's totals as the store
// receives it (Server-Sent Events from /api/runs/ID/events), drawn as it
// comes; a multi-host run's hosts as dashed lines beside the total. No library, nothing from the network: text goes in through
// textContent, charts are SVG polylines.
"use strict";
(function () {
  var script = document.getElementById("live-script");
  var run = script ? script.getAttribute("data-run") : null;
  if (!run) { return; }
  var SVG = "http://www.w3.org/2000/svg";
  var MAX_POINTS = 3600;
  var points = [];
  var series = {
    iops: [{ key: "iops", color: "#1f77b4" }],
    lat: [
      { key: "p50", color: "#1f77b4" },
      { key: "p99", color: "#ff7f0e" },
      { key: "p999", color: "#d62728" }
    ]
  };

  // A multi-host run: each host a dashed line of its own colour, added
  // when it first appears (IOPS beside the total's, p99 beside the
  // total's percentiles).
  var hostNames = [];
  var PALETTE = ["#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  function addHost(name) {
    var color = PALETTE[hostNames.length % PALETTE.length];
    hostNames.push(name);
    series.iops.push({ key: "h:" + name, color: color, host: name });
    series.lat.push({ key: "hl:" + name, color: color, host: name });
  }

  // Time on the x axis runs on across steps (each step's t_s starts at
  // its own start): a new step starts where the last one ended, the pauses
  // between steps left out.
  var offset = 0, lastStep = null, lastT = 0;
  function figure(doc) {
    var t = doc.total || {};
    var lat = t.lat_ns || {};
    if (lastStep !== null && doc.step !== lastStep) { offset += lastT; }
    lastStep = doc.step;
    lastT = doc.t_s || 0;
    var p = {
      step: doc.step,
      x: offset + (doc.t_s || 0),
      t: doc.t_s,
      iops: t.iops || 0,
      mbs: (t.bw_bytes_per_s || 0) / 1e6,
      p50: (lat.p50 || 0) / 1e6,
      p99: (lat.p99 || 0) / 1e6,
      p999: (lat.p99_9 || 0) / 1e6,
      hosts: doc.hosts || []
    };
    p.hosts.forEach(function (h) {
      if (hostNames.indexOf(h.host) < 0) { addHost(h.host); }
      p["h:" + h.host] = h.iops || 0;
      p["hl:" + h.host] = (h.lat_p99_ns || 0) / 1e6;
    });
    return p;
  }

  // The hosts' rows under the totals' (one per host, this interval).
  function showHosts(p) {
    var body = document.getElementById("hosts-now");
    if (!body || p.hosts.length === 0) { return; }
    document.getElementById("hosts-figures").removeAttribute("hidden");
    while (body.firstChild) { body.removeChild(body.firstChild); }
    p.hosts.forEach(function (h) {
      var tr = document.createElement("tr");
      [h.host, fixed(h.iops || 0), fixed((h.bw_bytes_per_s || 0) / 1e6), fixed((h.lat_p99_ns || 0) / 1e6)].forEach(function (v, i) {
        var td = document.createElement("td");
        if (i > 0) { td.className = "num"; }
        td.textContent = v;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function fixed(v) {
    if (v === 0) { return "0"; }
    if (v >= 100) { return v.toFixed(0); }
    if (v >= 1) { return v.toFixed(2); }
    return v.toFixed(3);
  }

  function showNow(p) {
    var row = document.getElementById("now");
    if (!row) { return; }
    var cells = row.getElementsByTagName("td");
    var values = [String(p.step + 1), p.t.toFixed(1), fixed(p.iops), fixed(p.mbs), fixed(p.p50), fixed(p.p99), fixed(p.p999)];
    for (var i = 0; i < cells.length && i < values.length; i++) {
      cells[i].textContent = values[i];
    }
  }

  function el(name, attrs, text) {
    var e = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // A chart with both axes in units: time (s) across, the figure up, drawn
  // in the SVG's own pixels so the text is not stretched.
  function draw(id, lines, unit) {
    var svg = document.getElementById(id);
    if (!svg || points.length === 0) { return; }
    while (svg.lastChild && svg.lastChild.nodeName !== "title") { svg.removeChild(svg.lastChild); }
    var W = Math.max(svg.clientWidth || 1000, 200), H = Math.max(svg.clientHeight || 260, 120);
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var L = 80, R = 12, T = 10, B = 34;
    var max = 0;
    points.forEach(function (p) { lines.forEach(function (l) { max = Math.max(max, p[l.key] || 0); }); });
    if (max <= 0) { max = 1; }
    var x0 = points[0].x, x1 = points[points.length - 1].x;
    if (x1 <= x0) { x1 = x0 + 1; }
    var sx = function (x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    var sy = function (v) { return H - B - v / max * (H - T - B); };
    var axis = el("g", { "class": "axis", "font-size": "12", "fill": "#5b6474" });
    for (var i = 0; i <= 4; i++) {
      var v = max * i / 4, y = sy(v);
      axis.appendChild(el("line", { x1: L, x2: W - R, y1: y, y2: y, stroke: "#e5e8ee" }));
      axis.appendChild(el("text", { x: L - 6, y: y + 4, "text-anchor": "end", "class": "tick y" }, fixed(v)));
      var t = x0 + (x1 - x0) * i / 4, x = sx(t);
      axis.appendChild(el("text", { x: x, y: H - B + 16, "text-anchor": "middle", "class": "tick x" }, t.toFixed(1)));
    }
    axis.appendChild(el("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#5b6474" }));
    axis.appendChild(el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#5b6474" }));
    axis.appendChild(el("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", "class": "title x" }, "time in the run's steps (s)"));
    axis.appendChild(el("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", "class": "title y", transform: "rotate(-90 14 " + ((T + H - B) / 2) + ")" }, unit));
    svg.appendChild(axis);
    // The legend, top right on a light ground: the total's lines, then
    // every host, as wide as its longest name.
    var names = lines.map(function (l) {
      if (!l.host) { return l.key === "iops" ? "total" : l.key.replace("p999", "p99.9"); }
      return l.key.indexOf("hl:") === 0 ? l.host + " p99" : l.host;
    });
    var longest = Math.max.apply(null, names.map(function (n) { return n.length; }));
    var lx = W - R - 34 - 7 * longest;
    lines.forEach(function (l) {
      // A host's line starts where the host first reported.
      var mine = points.filter(function (p) { return p[l.key] !== undefined; });
      var coords = mine.map(function (p) {
        return sx(p.x).toFixed(1) + "," + sy(p[l.key]).toFixed(1);
      });
      var attrs = {
        points: coords.join(" "), fill: "none", stroke: l.color, "stroke-width": "2",
        "class": "series " + (l.host ? "host" : l.key), "data-points": String(mine.length)
      };
      if (l.host) { attrs["stroke-dasharray"] = "6,3"; attrs["data-host"] = l.host; }
      svg.appendChild(el("polyline", attrs));
    });
    svg.appendChild(el("rect", { x: lx - 4, y: T + 2, width: W - R - lx, height: 15 * lines.length + 6, fill: "#fff", "fill-opacity": "0.85" }));
    lines.forEach(function (l, k) {
      var y = T + 14 + 15 * k;
      svg.appendChild(el("line", { x1: lx, x2: lx + 22, y1: y - 4, y2: y - 4, stroke: l.color, "stroke-width": "2", "stroke-dasharray": l.host ? "6,3" : "none" }));
      svg.appendChild(el("text", { x: lx + 28, y: y, "font-size": "12", fill: "#1b1f24", "class": "legend" }, names[k]));
    });
  }

  // Elapsed of the planned total and the time left, once a second.
  var clock = document.getElementById("clock");
  var started = clock ? Date.parse(clock.getAttribute("data-started")) : NaN;
  var total = clock && clock.hasAttribute("data-total-s") ? Number(clock.getAttribute("data-total-s")) : null;
  var ended = null;
  function secs(s) {
    s = Math.max(0, Math.round(s));
    if (s < 60) { return s + " s"; }
    var m = Math.floor(s / 60);
    if (m < 60) { return m + " min " + (s % 60) + " s"; }
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }
  function tick() {
    if (!clock || isNaN(started)) { return; }
    var elapsed = (Date.now() - started) / 1000;
    if (ended !== null) {
      var last = points.length ? points[points.length - 1].x : 0;
      clock.textContent = "ended (" + ended + "); its intervals cover " + last.toFixed(1) + " s";
    } else if (total !== null) {
      clock.textContent = "elapsed " + secs(elapsed) + " of " + secs(total) +
        " · ETA " + secs(total - elapsed);
    } else {
      clock.textContent = "elapsed " + secs(elapsed) + " (the run's length is not known ahead)";
    }
  }
  var timer = window.setInterval(tick, 1000);
  tick();

  var pending = false;
  function redraw() {
    pending = false;
    draw("iops", series.iops, "IOPS");
    draw("lat", series.lat, "latency (ms)");
  }

  var source = new EventSource("/api/runs/" + encodeURIComponent(run) + "/events");
  source.addEventListener("interval", function (ev) {
    var p = figure(JSON.parse(ev.data));
    points.push(p);
    if (points.length > MAX_POINTS) { points.shift(); }
    showNow(p);
    showHosts(p);
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(redraw);
    }
  });
  source.addEventListener("end", function (ev) {
    var status = document.getElementById("status");
    if (status) { status.textContent = ev.data; }
    source.close();
    ended = ev.data;
    tick();
    window.clearInterval(timer);
    redraw();
  });
})();
