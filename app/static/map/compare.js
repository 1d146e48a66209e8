/* starroute map page: the search spaces of two to six algorithms side by side, on small maps that move together,
 * each with its settled search nodes (same colour ramp: first settled to last), its meeting point(s) and the route,
 * with the comparison table beside them. Opened from the "side by side" button once "compare algorithms" ran;
 * uses the page's search-space layer and road tiles (app.js passes them in).
 */
(function (global) {
  'use strict';

  var MAX = 6, maps = [], syncing = false, current = null;
  var $ = function (id) { return document.getElementById(id); };
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }

  function close(silent) {
    maps.forEach(function (m) { m.remove(); });
    maps = [];
    $('compare-grid').innerHTML = '';
    $('compare-view').hidden = true;
    var was = current;
    current = null;
    if (!silent && was && was.onClose) was.onClose();
  }

  /* Bounds of every point of the shown search spaces (and the route's waypoints). */
  function bounds(rows, points) {
    var w = 180, s = 90, e = -180, n = -90;
    var add = function (lon, lat) {
      if (lon < w) w = lon; if (lon > e) e = lon; if (lat < s) s = lat; if (lat > n) n = lat;
    };
    rows.forEach(function (r) { r.points.forEach(function (p) { add(p[0], p[1]); }); });
    points.forEach(function (p) { add(p[0], p[1]); });
    return e >= w ? L.latLngBounds([s, w], [n, e]) : null;
  }

  function sync(from) {
    if (syncing) return;
    syncing = true;
    maps.forEach(function (m) { if (m !== from) m.setView(from.getCenter(), from.getZoom(), { animate: false }); });
    syncing = false;
  }

  function table(o) {
    var tb = document.querySelector('#cmp-table tbody');
    tb.innerHTML = '';
    o.rows.forEach(function (r) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-alg', r.alg);
      if (!r.points) {
        tr.innerHTML = '<td></td><td>' + esc(r.alg) + '</td><td colspan="3" class="muted">' + esc(r.refused || '') +
          '</td>';
      } else {
        var on = o.chosen.indexOf(r.alg) >= 0;
        tr.innerHTML = '<td><input type="checkbox"' + (on ? ' checked' : '') +
          ' title="show on a small map"></td><td>' +
          esc(r.alg) + '</td><td>' + r.stats.settled.toLocaleString() + (r.truncated ? '*' : '') + '</td><td>' +
          r.stats.relaxed.toLocaleString() + '</td><td' + (r.stats.compile_ms ? ' class="compiled" title="includes ' +
          Math.round(r.stats.compile_ms).toLocaleString() + ' ms of compiling the search kernels (first use)">' : '>') +
          Math.round(r.stats.micros).toLocaleString() + (r.stats.compile_ms ? ' †' : '') + '</td>';
        tr.querySelector('input').onchange = function () {
          var chosen = o.rows.filter(function (x) {
            var box = tb.querySelector('tr[data-alg="' + x.alg + '"] input');
            return box && box.checked;
          }).map(function (x) { return x.alg; });
          if (chosen.length > MAX) { this.checked = false; return; }
          o.chosen = chosen;
          if (o.onChange) o.onChange(chosen);
          grid(o);
        };
      }
      tb.appendChild(tr);
    });
    var g = (o.health && o.health.graph) || {}, c = g.counts || {};
    $('cmp-note').textContent = (g.search_graph === 'edge'
      ? 'Counts are search nodes. This graph is searched edge-based (turn costs and restrictions): a search node is ' +
        'a road arc, one direction of a street between two junctions (' + (g.search_nodes || 0).toLocaleString() +
        ' search nodes for ' + (c.nodes || 0).toLocaleString() + ' road nodes), so a search can settle more search ' +
        'nodes than the map has junctions. A dot is the end of a settled arc.'
      : 'Counts are search nodes: the junctions of the road graph (' + (c.nodes || 0).toLocaleString() + ').') +
      ' Tick 2-6 algorithms; the maps move together.';
  }

  function grid(o) {
    maps.forEach(function (m) { m.remove(); });
    maps = [];
    var el = $('compare-grid'), rows = o.rows.filter(function (r) { return o.chosen.indexOf(r.alg) >= 0; });
    el.innerHTML = '';
    var n = rows.length, cols = n <= 1 ? 1 : n <= 4 ? 2 : 3;
    el.style.gridTemplateColumns = 'repeat(' + cols + ', minmax(0, 1fr))';
    el.style.gridTemplateRows = 'repeat(' + Math.max(1, Math.ceil(n / cols)) + ', minmax(0, 1fr))';
    var view = bounds(rows, o.points) || o.view;
    rows.forEach(function (r) {
      var cell = document.createElement('div');
      cell.className = 'cmp-cell';
      cell.setAttribute('data-alg', r.alg);
      cell.innerHTML = '<div class="cmp-title"><b>' + esc(r.alg) + '</b> · ' + r.stats.settled.toLocaleString() +
        ' search nodes' + (r.truncated ? '*' : '') + '</div><div class="cmp-map"></div>';
      el.appendChild(cell);
      var m = L.map(cell.querySelector('.cmp-map'), { zoomControl: false, attributionControl: false, maxZoom: 19,
        zoomSnap: 0.25, fadeAnimation: false, zoomAnimation: false });
      m.createPane('sr-search').style.zIndex = 450;
      m.getPane('sr-search').style.pointerEvents = 'none';
      if (o.background && L.starrouteBackground) L.starrouteBackground(o.background).addTo(m);
      L.starrouteRoads(o.tiles, { colour: o.bg }).addTo(m);
      if (o.route) {
        L.geoJSON(o.route, { style: { color: '#1565c0', weight: 3, opacity: 0.8 }, interactive: false }).addTo(m);
      }
      m.fitBounds(view, { padding: [10, 10] });
      var layer = new o.SearchLayer({ small: true });
      layer.addTo(m);
      layer.setData(r.points, r.alg);
      r.meet.forEach(function (p) {
        L.circleMarker([p[1], p[0]], { radius: 6, color: '#000', weight: 2, fill: false, interactive: false,
          pane: 'sr-search' }).addTo(m);
      });
      o.points.forEach(function (p, i) {
        L.circleMarker([p[1], p[0]], { radius: 5, color: '#fff', weight: 2, fillOpacity: 1, interactive: false,
          fillColor: i === 0 ? '#2e7d32' : i === o.points.length - 1 ? '#c62828' : '#ef6c00' }).addTo(m);
      });
      m.on('move', function () { sync(m); });
      maps.push(m);
    });
    $('compare-view').setAttribute('data-maps', String(maps.length));
  }

  /* o: {rows, chosen, health, route, points, tiles, bg, background, SearchLayer, view, onChange, onClose} */
  function open(o) {
    close(true);
    current = o;
    $('compare-view').hidden = false;
    $('compare-close').onclick = function () { close(false); };
    table(o);
    grid(o);
  }

  global.StarrouteCompare = { open: open, close: function () { close(true); }, maps: function () { return maps; } };
})(window);
