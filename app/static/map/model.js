/* starroute map page: a custom model (GraphHopper's format) to paste or edit, with a few examples, and the route it
 * gives (orange) beside the default route (blue). The model goes to `POST /route` with the page's waypoints and
 * excluded classes; a malformed one shows the server's 400, which names the rule. Its areas are drawn on the map.
 */
(function (global) {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var layer = null, seq = 0;

  function centreBox(frac) {  // a box around the view's centre, `frac` of the view wide: the "city centre" example
    var m = global.starroute.map, c = m.getCenter(), b = m.getBounds();
    var dx = (b.getEast() - b.getWest()) * frac / 2, dy = (b.getNorth() - b.getSouth()) * frac / 2;
    var r = function (x) { return Math.round(x * 1e5) / 1e5; };
    return [[r(c.lng - dx), r(c.lat - dy)], [r(c.lng + dx), r(c.lat - dy)], [r(c.lng + dx), r(c.lat + dy)],
      [r(c.lng - dx), r(c.lat + dy)], [r(c.lng - dx), r(c.lat - dy)]];
  }

  var EXAMPLES = {
    truck: function () {
      return { priority: [{ 'if': 'max_height < 4 || max_weight < 12', multiply_by: '0' },
        { 'if': 'road_access == DESTINATION', multiply_by: '0.1' }],
      speed: [{ 'if': 'true', limit_to: '80' }] };
    },
    'no-motorways': function () {
      return { priority: [{ 'if': 'road_class == MOTORWAY', multiply_by: '0' }] };
    },
    'slow-centre': function () {
      return { speed: [{ 'if': 'in_centre', multiply_by: '0.4' }],
        areas: { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'centre', properties: {},
          geometry: { type: 'Polygon', coordinates: [centreBox(0.4)] } }] } };
    },
    'short': function () {
      return { distance_influence: 100, priority: [{ 'if': 'road_class == RESIDENTIAL', multiply_by: '0.8' }] };
    }
  };

  function fmtDuration(s) { return s >= 3600 ? Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min' :
    s >= 60 ? Math.round(s / 60) + ' min' : Math.round(s) + ' s'; }
  function fmtDistance(m) { return m >= 1000 ? (m / 1000).toFixed(1) + ' km' : Math.round(m) + ' m'; }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }

  function clear() {
    if (layer) layer.clearLayers();
    $('model-result').innerHTML = '';
    $('map').removeAttribute('data-model-route');
  }

  /* Route the page's waypoints with the model in the box; draw it and say how it compares with the default route. */
  function update() {
    var text = $('model-text').value.trim();
    var st = global.starroute.state;
    if (!text || !$('model-on').checked || st.points.length < 2) { clear(); return Promise.resolve(); }
    var model;
    try { model = JSON.parse(text); } catch (e) {
      clear();
      $('model-result').innerHTML = '<span class="error">not JSON: ' + esc(e.message) + '</span>';
      return Promise.resolve();
    }
    var body = { coordinates: st.points, exclude: st.exclude, custom_model: model, overview: 'full' };
    var mine = ++seq;
    $('model-result').textContent = 'routing…';
    return fetch('/route', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body) }).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, body: j }; });
    }).then(function (res) {
      if (mine !== seq) return;
      clear();
      if (!res.ok) {
        $('model-result').innerHTML = '<span class="error">' + esc(res.body.code || 'error') + ': ' +
          esc(res.body.message || res.body.detail || '') + '</span>';
        return;
      }
      draw(res.body, model);
    }).catch(function (e) {
      if (mine === seq) $('model-result').innerHTML = '<span class="error">' + esc(e.message) + '</span>';
    });
  }

  function draw(feature, model) {
    var areas = model.areas && model.areas.features ? model.areas : null;
    if (areas) {
      L.geoJSON(areas, { style: { color: '#e65100', weight: 1, fillOpacity: 0.08, dashArray: '4 4' },
        interactive: false }).addTo(layer);
    }
    L.geoJSON(feature, { style: { color: '#fff', weight: 8, opacity: 0.8 }, interactive: false }).addTo(layer);
    L.geoJSON(feature, { style: { color: '#e65100', weight: 4, opacity: 0.95, dashArray: '10 6',
      className: 'sr-model-route' } }).bindTooltip('route with the custom model', { sticky: true }).addTo(layer);
    var p = feature.properties, cm = p.custom_model || {}, base = global.starroute.last;
    var html = '<b style="color:#e65100">model</b>: ' + fmtDuration(p.duration_s) + ' · ' + fmtDistance(p.distance_m);
    if (base && base.properties) {
      var bp = base.properties;
      html += '<br><b style="color:#1565c0">default</b>: ' + fmtDuration(bp.duration_s) + ' · ' +
        fmtDistance(bp.distance_m);
    }
    html += '<br><span class="muted">' + esc(cm.method || p.algorithm) + (cm.cached ? ', cached' : ', built now') +
      ' · ' + (cm.closed_arcs || 0).toLocaleString() + ' road arcs closed · key ' + esc(cm.key || '') + '</span>';
    $('model-result').innerHTML = html;
    $('map').setAttribute('data-model-route', cm.method || p.algorithm);
  }

  function init() {
    layer = L.layerGroup().addTo(global.starroute.map);
    $('model-example').onchange = function () {
      var make = EXAMPLES[this.value];
      if (!make) return;
      $('model-text').value = JSON.stringify(make(), null, 1);
      $('model-on').checked = true;
      update();
    };
    $('model-apply').onclick = function () { $('model-on').checked = true; update(); };
    $('model-on').onchange = update;
    $('model-clear').onclick = function () { $('model-text').value = ''; $('model-example').value = ''; clear(); };
  }

  global.StarrouteModel = { update: update, clear: clear, examples: EXAMPLES };
  if (global.starroute && global.starroute.ready) global.starroute.ready.then(init); else init();
})(window);
