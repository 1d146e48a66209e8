/* starroute map page: departure time (issue 44), shown only when the graph has time profiles (`/health`'s
 * graph.time_profiles). A day of the week and a quarter hour (the slider) set the routes' and the isochrone's
 * `depart_at` (app.js adds it to every request; "no time", the default, keeps the static route). The "when to leave"
 * chart: the current route's duration for each of the 96 quarter-hour departures of the chosen day, one native
 * `GET /route?...&depart_at=...&overview=false` per departure (a few at a time), drawn as an SVG line; a click on it
 * chooses that time.
 */
(function (global) {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
  var W = 336, H = 132, L0 = 44, R0 = 8, T0 = 8, B0 = 20;  // the chart's box and margins (viewBox units)
  var PARALLEL = 4;  // chart requests in flight at once
  var sr = null, chartKey = null, chartSeq = 0;
  var api = { durations: null, update: update, sync: sync };

  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }
  function profiled() { var h = sr.health; return !!(h && h.graph && h.graph.time_profiles); }

  /* The controls from the page's state (start, a URL edit). */
  function sync() {
    if (!sr) return;
    var dep = sr.state.dep;
    $('dep-day').value = dep ? String(dep.day) : '';
    $('dep-time').disabled = !dep;
    if (dep) $('dep-time').value = String(dep.q);
    label();
    update();
  }

  function label() {
    var dep = sr.state.dep;
    $('dep-label').textContent = dep ? DAY_NAMES[dep.day].slice(0, 3) + ' ' + sr.quarter(dep.q) :
      'no time (static route)';
  }

  /* A new departure time: the route, the URL and the isochrone follow it. */
  function changed() {
    label();
    sr.writeHash();
    sr.route(false);
    if (sr.state.iso) sr.isochrone();
  }

  function clearChart(note) {
    chartKey = null;
    chartSeq++;
    api.durations = null;
    $('dep-chart').innerHTML = '';
    $('dep-chart').setAttribute('hidden', '');  // (an SVG element has no `hidden` property)
    $('dep-chart').removeAttribute('data-points');
    $('dep-note').textContent = note || '';
  }

  /* After each route drawn and on a new day: the chart of the current route on the chosen day (asked again only
   * when the waypoints, classes or day changed; else only its marker moves). */
  function update() {
    if (!sr) return Promise.resolve();  // (routes drawn before the page's set-up ends: init draws the chart)
    var st = sr.state;
    if (!profiled() || !st.dep) { clearChart(''); return Promise.resolve(); }
    if (st.points.length < 2) { clearChart('Set a start and a destination for the chart.'); return Promise.resolve(); }
    if (st.avoid.length) { clearChart('No chart with areas to avoid (departure times do not take them).');
      return Promise.resolve(); }
    var base = sr.routeQuery(), day = st.dep.day, key = base + '|' + day;
    if (key === chartKey) { draw(); return Promise.resolve(); }
    chartKey = key;
    var seq = ++chartSeq, out = new Array(96), next = 0, failed = null;
    out.fill(null);
    api.durations = null;
    $('dep-note').textContent = 'asking for 96 departures…';
    function one() {
      if (next >= 96 || seq !== chartSeq) return Promise.resolve();
      var q = next++;
      return sr.getJSON('/route?' + base + '&overview=false&depart_at=' + sr.departAt(day, q)).then(function (f) {
        out[q] = f.properties.duration_s;
      }, function (e) { failed = failed || e.message; }).then(one);
    }
    var workers = [];
    for (var k = 0; k < PARALLEL; k++) workers.push(one());
    return Promise.all(workers).then(function () {
      if (seq !== chartSeq) return;
      api.durations = out;
      draw();
      $('dep-note').textContent = failed ? 'some departures have no route: ' + failed : best(out, day);
    });
  }

  function best(out, day) {
    var lo = -1, hi = -1;
    out.forEach(function (d, q) {
      if (d === null) return;
      if (lo < 0 || d < out[lo]) lo = q;
      if (hi < 0 || d > out[hi]) hi = q;
    });
    if (lo < 0) return '';
    return DAY_NAMES[day] + ': fastest leaving at ' + sr.quarter(lo) + ' (' + sr.fmtDuration(out[lo]) +
      '), slowest at ' + sr.quarter(hi) + ' (' + sr.fmtDuration(out[hi]) + ')';
  }

  function x(q) { return L0 + (W - L0 - R0) * q / 96; }

  /* The duration line, the hours, the range of durations and the chosen time's marker. */
  function draw() {
    var out = api.durations, svg = $('dep-chart');
    if (!out) return;
    var vals = out.filter(function (d) { return d !== null; });
    if (!vals.length) { svg.setAttribute('hidden', ''); return; }
    var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals), span = Math.max(hi - lo, 1);
    var pad = span * 0.1, y0 = lo - pad, y1 = hi + pad;
    var y = function (d) { return T0 + (H - T0 - B0) * (1 - (d - y0) / (y1 - y0)); };
    var parts = ['<rect x="' + L0 + '" y="' + T0 + '" width="' + (W - L0 - R0) + '" height="' + (H - T0 - B0) +
      '" fill="#fafafa" stroke="#ddd"/>'];
    [0, 6, 12, 18, 24].forEach(function (h) {
      parts.push('<line x1="' + x(h * 4) + '" x2="' + x(h * 4) + '" y1="' + T0 + '" y2="' + (H - B0) +
        '" stroke="#eee"/><text x="' + x(h * 4) + '" y="' + (H - 6) + '" text-anchor="middle">' +
        (h < 10 ? '0' : '') + h + ':00</text>');
    });
    [[hi, y(hi)], [lo, y(lo)]].forEach(function (t) {
      parts.push('<text x="' + (L0 - 4) + '" y="' + (t[1] + 3) + '" text-anchor="end">' +
        esc(sr.fmtDuration(t[0])) + '</text>');
    });
    var run = [];
    var flush = function () {
      if (run.length) parts.push('<polyline class="dep-line" fill="none" stroke="#1565c0" stroke-width="2" points="' +
        run.join(' ') + '"/>');
      run = [];
    };
    out.forEach(function (d, q) {
      if (d === null) { flush(); return; }
      run.push(x(q).toFixed(1) + ',' + y(d).toFixed(1));
    });
    flush();
    var dep = sr.state.dep;
    if (dep && out[dep.q] !== null) {
      parts.push('<line class="dep-now" x1="' + x(dep.q) + '" x2="' + x(dep.q) + '" y1="' + T0 + '" y2="' +
        (H - B0) + '" stroke="#c62828"/><circle cx="' + x(dep.q) + '" cy="' + y(out[dep.q]) +
        '" r="3.5" fill="#c62828"><title>' + sr.quarter(dep.q) + ': ' + esc(sr.fmtDuration(out[dep.q])) +
        '</title></circle>');
    }
    svg.innerHTML = parts.join('');
    svg.setAttribute('data-points', String(vals.length));
    svg.removeAttribute('hidden');
  }

  function init() {
    if (!profiled()) { $('dep-section').hidden = true; return; }
    $('dep-section').hidden = false;
    var st = sr.state;
    $('dep-day').onchange = function () {
      var v = this.value;
      st.dep = v === '' ? null : { day: Number(v), q: st.dep ? st.dep.q : Number($('dep-time').value) };
      $('dep-time').disabled = !st.dep;
      changed();
    };
    $('dep-time').oninput = function () {  // the label follows the slider; the route when it is let go
      if (st.dep) { st.dep.q = Number(this.value); label(); draw(); }
    };
    $('dep-time').onchange = function () {
      if (!st.dep) return;
      st.dep.q = Number(this.value);
      changed();
    };
    $('dep-chart').onclick = function (e) {
      var box = this.getBoundingClientRect(), vx = (e.clientX - box.left) * W / box.width;
      var q = Math.max(0, Math.min(95, Math.round((vx - L0) / (W - L0 - R0) * 96)));
      if (!st.dep) return;
      st.dep.q = q;
      $('dep-time').value = String(q);
      changed();
    };
    sync();
  }

  global.StarrouteDeparture = api;
  global.starroute.ready.then(function () { sr = global.starroute; init(); });
})(window);
