// The live view of a run: every interval of the run's totals as the store
// receives it (Server-Sent Events from /api/runs/ID/events), drawn as it
// comes. No library, nothing from the network: text goes in through
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

  function figure(doc) {
    var t = doc.total || {};
    var lat = t.lat_ns || {};
    return {
      step: doc.step,
      t: doc.t_s,
      iops: t.iops || 0,
      mbs: (t.bw_bytes_per_s || 0) / 1e6,
      p50: (lat.p50 || 0) / 1e6,
      p99: (lat.p99 || 0) / 1e6,
      p999: (lat.p99_9 || 0) / 1e6
    };
  }

  function fixed(v) {
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

  function draw(id, lines) {
    var svg = document.getElementById(id);
    if (!svg || points.length === 0) { return; }
    while (svg.lastChild && svg.lastChild.nodeName !== "title") { svg.removeChild(svg.lastChild); }
    var max = 0;
    points.forEach(function (p) { lines.forEach(function (l) { max = Math.max(max, p[l.key]); }); });
    if (max <= 0) { max = 1; }
    var n = points.length;
    var label = document.createElementNS(SVG, "text");
    label.setAttribute("x", "6");
    label.setAttribute("y", "16");
    label.setAttribute("font-size", "14");
    label.textContent = "max " + fixed(max);
    svg.appendChild(label);
    lines.forEach(function (l) {
      var coords = points.map(function (p, i) {
        var x = n === 1 ? 500 : (i / (n - 1)) * 1000;
        var y = 255 - (p[l.key] / max) * 230;
        return x.toFixed(1) + "," + y.toFixed(1);
      });
      var line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", coords.join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", l.color);
      line.setAttribute("stroke-width", "2");
      line.setAttribute("vector-effect", "non-scaling-stroke");
      line.setAttribute("class", "series " + l.key);
      line.setAttribute("data-points", String(n));
      svg.appendChild(line);
    });
  }

  var pending = false;
  function redraw() {
    pending = false;
    draw("iops", series.iops);
    draw("lat", series.lat);
  }

  var source = new EventSource("/api/runs/" + encodeURIComponent(run) + "/events");
  source.addEventListener("interval", function (ev) {
    var p = figure(JSON.parse(ev.data));
    points.push(p);
    if (points.length > MAX_POINTS) { points.shift(); }
    showNow(p);
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(redraw);
    }
  });
  source.addEventListener("end", function (ev) {
    var status = document.getElementById("status");
    if (status) { status.textContent = ev.data; }
    source.close();
    redraw();
  });
})();
