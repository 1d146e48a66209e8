/* starroute map page: routes on the road network the server draws, the search space of each algorithm, areas to
 * avoid, excluded road classes, isochrones. Everything comes from this server (no CDN, no tile server).
 *
 * State lives in the URL hash (shareable): #loc=lon,lat;lon,lat&alg=ch&ex=toll&avoid=lon,lat;…|…&iso=lon,lat
 * &min=5,10,15&rev=1&ss=dijkstra&sbs=dijkstra,ch&bg=speed&dep=mon,08:00&map=z/lat/lon
 * (`dep`: a departure time, a day of the week and a quarter hour; only on a graph with time profiles, departure.js)
 */
(function () {
  'use strict';

  var EXCLUDABLE = {  // the class sets each profile lets a request exclude (preprocessing/osm/profiles/*.py EXCLUDABLE)
    car: [['toll'], ['motorway'], ['ferry']], bike: [['ferry']], bicycle: [['ferry']], foot: [],
    testbot: [['motorway'], ['toll'], ['motorway', 'toll']]
  };
  var CLASS_LABEL = { toll: 'toll roads', motorway: 'motorways', ferry: 'ferries' };
  var RAMP = ['#440154', '#414487', '#2a788e', '#22a884', '#7ad151', '#fde725'];
  var ISO_COLOURS = ['#f3e5f5', '#ce93d8', '#8e24aa', '#4a148c', '#311b92'];

  var $ = function (id) { return document.getElementById(id); };
  var state = { points: [], alg: null, exclude: [], avoid: [], iso: null, minutes: null, reverse: false,
    ss: null, sbs: [], bg: 'class', dep: null };  // dep: {day: 0 (Monday)..6, q: quarter hour 0..95} or null
  var health = null, algorithms = [], profile = 'car';
  var map, roads, background = null;
  var routeLayer, altLayer, markerLayer, areaLayer, isoLayer, drawLayer, searchLayer, meetLayer;
  var mode = null;  // null | 'draw' | 'iso'
  var drawing = [];
  var routeSeq = 0, searchSeq = 0, searchActive = false, searchRows = [], firstRoute = true;
  var osrmRoutes = [], mainLine = null, bestSummary = '';  // the OSRM API's routes shown; the best one's figures

  // -- helpers -------------------------------------------------------------------------------------------------------
  function fmt(x) { return (Math.round(x * 1e6) / 1e6).toString(); }
  function ll(p) { return fmt(p[0]) + ',' + fmt(p[1]); }
  function duration(s) {
    if (s < 60) return Math.round(s) + ' s';
    var m = Math.floor(s / 60), h = Math.floor(m / 60);
    return h ? h + ' h ' + (m % 60) + ' min' : m + ' min ' + Math.round(s % 60) + ' s';
  }
  /* A search's time in the engine; on a kernel's first use after a start it includes compiling (or loading) it,
   * which the server says (`stats.compile_ms`): marked †, with the figure in the title. */
  function compiled(stats) {
    return stats.compile_ms ? 'includes ' + Math.round(stats.compile_ms).toLocaleString() + ' ms of compiling the ' +
      'search kernels (their first use since the server started): run it again for the search alone' : '';
  }
  function micros(stats) {
    var text = Math.round(stats.micros).toLocaleString() + ' µs';
    return stats.compile_ms ? '<span class="compiled" title="' + esc(compiled(stats)) + '">' + text + ' †</span>' :
      text;
  }
  /* The clock time of an ISO 8601 answer time (its local time): Mon 08:12. */
  function clock(t) {
    var m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)/.exec(t || '');
    if (!m) return String(t);
    var wd = (new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])).getUTCDay() + 6) % 7;
    return ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'][wd] + ' ' + m[4] + ':' + m[5];
  }
  function distance(m) { return m < 1000 ? Math.round(m) + ' m' : (m / 1000).toFixed(m < 10000 ? 2 : 1) + ' km'; }
  /* A message over the map, where the eye is (not at the foot of the panel): `error` ones in red. */
  function status(text, error) {
    var el = $('status');
    el.textContent = text || '';
    el.classList.toggle('error', !!(text && error));
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }

  var pending = 0;  // requests in flight (tests wait for 0)

  // -- departure time ------------------------------------------------------------------------------------------------
  var DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  function two(n) { return (n < 10 ? '0' : '') + n; }
  function quarter(q) { return two(Math.floor(q / 4)) + ':' + two((q % 4) * 15); }
  function readDep(v) {
    var m = /^(mon|tue|wed|thu|fri|sat|sun),(\d\d):(00|15|30|45)$/.exec(v || '');
    var h = m ? Number(m[2]) : 99;
    return h < 24 ? { day: DAYS.indexOf(m[1]), q: h * 4 + Number(m[3]) / 15 } : null;
  }
  function timed() { return !!(state.dep && health && health.graph && health.graph.time_profiles); }
  /* A departure time the API takes: the coming `day` (today when it is that day), at quarter hour `q`, written
   * without offset (the graph's local time). */
  function departAt(day, q) {
    var d = new Date(), ahead = (day - (d.getDay() + 6) % 7 + 7) % 7;
    d.setDate(d.getDate() + ahead);
    return d.getFullYear() + '-' + two(d.getMonth() + 1) + '-' + two(d.getDate()) + 'T' + quarter(q);
  }
  function departParam() { return timed() ? '&depart_at=' + departAt(state.dep.day, state.dep.q) : ''; }

  function getJSON(url) {
    pending++;
    var done = function (x) { pending--; return x; };
    var fail = function (e) { pending--; throw e; };
    return fetch(url).then(function (resp) {
      return resp.json().then(function (body) {
        if (!resp.ok || (body.code && body.code !== 'Ok')) {
          var err = new Error((body.code || resp.status) + ': ' + (body.message || resp.statusText));
          err.code = body.code;
          throw err;
        }
        return body;
      });
    }).then(done, fail);
  }

  // -- URL state -----------------------------------------------------------------------------------------------------
  function readHash() {
    var h = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) h[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
    var pairs = function (s) {
      return s ? s.split(';').map(function (p) { return p.split(',').map(Number); }).filter(function (p) {
        return p.length === 2 && isFinite(p[0]) && isFinite(p[1]);
      }) : [];
    };
    state.points = pairs(h.loc);
    state.alg = h.alg || null;
    state.exclude = h.ex ? h.ex.split(',') : [];
    state.avoid = h.avoid ? h.avoid.split('|').map(pairs).filter(function (r) { return r.length >= 3; }) : [];
    var iso = pairs(h.iso);
    state.iso = iso.length ? iso[0] : null;
    state.minutes = h.min || null;
    state.reverse = h.rev === '1';
    state.ss = h.ss || null;
    state.sbs = h.sbs ? h.sbs.split(',') : [];
    state.bg = h.bg === 'speed' ? 'speed' : 'class';
    state.dep = readDep(h.dep);
    var v = (h.map || '').split('/').map(Number);
    return v.length === 3 && v.every(isFinite) ? v : null;
  }

  function writeHash() {
    var parts = [];
    if (state.points.length) parts.push('loc=' + state.points.map(ll).join(';'));
    if (state.alg) parts.push('alg=' + state.alg);
    if (state.exclude.length) parts.push('ex=' + state.exclude.join(','));
    if (state.avoid.length) parts.push('avoid=' + avoidParam());
    if (state.iso) parts.push('iso=' + ll(state.iso), 'min=' + isoMinutes());
    if (state.iso && state.reverse) parts.push('rev=1');
    if (searchActive && state.ss) parts.push('ss=' + state.ss);
    if (searchActive && state.sbs.length) parts.push('sbs=' + state.sbs.join(','));
    if (state.bg !== 'class') parts.push('bg=' + state.bg);
    if (state.dep) parts.push('dep=' + DAYS[state.dep.day] + ',' + quarter(state.dep.q));
    if (map) {
      var c = map.getCenter();
      parts.push('map=' + map.getZoom() + '/' + c.lat.toFixed(5) + '/' + c.lng.toFixed(5));
    }
    history.replaceState(null, '', '#' + parts.join('&'));
  }

  // -- waypoints -----------------------------------------------------------------------------------------------------
  function pinIcon(i, n) {
    var colour = i === 0 ? '#2e7d32' : i === n - 1 && n > 1 ? '#c62828' : '#ef6c00';
    var label = i === 0 ? 'A' : i === n - 1 && n > 1 ? 'B' : String(i);
    return L.divIcon({ className: '', iconSize: [22, 22], iconAnchor: [11, 26],
      html: '<div class="sr-pin" style="background:' + colour + '"><span>' + label + '</span></div>' });
  }

  /* What a waypoint is called: the name of the road it snaps to (from the route's answer, else /nearest). */
  var placeNames = {}, placeAsked = {};  // ll(point) -> road name ('' unnamed; null: no road near)
  function placeLabel(p) {
    var name = placeNames[ll(p)];
    return name === undefined ? ll(p) : name === null ? ll(p) + ' (no road near)' : name || 'unnamed road';
  }

  function labelWaypoints() {
    state.points.forEach(function (p, i) {
      var el = document.querySelector('#waypoints .name[data-i="' + i + '"]');
      if (el) { el.textContent = placeLabel(p); el.title = ll(p); }
    });
  }

  /* Whether `p` is far outside the graph's box (0.1 degrees, 8-11 km, beyond it): no road can be near, and /nearest
   * would only refuse it (a swapped lon/lat, a click beside the map). */
  function offGraph(p) {
    var b = (health && health.graph && health.graph.bbox) || null, m = 0.1;
    return !!b && (p[0] < b[0] - m || p[1] < b[1] - m || p[0] > b[2] + m || p[1] > b[3] + m);
  }

  /* Ask /nearest for the road name of each point no route answer has named (one point, or a route refused). */
  function nameWaypoints() {
    state.points.forEach(function (p) {
      var key = ll(p);
      if (placeNames[key] !== undefined || placeAsked[key]) return;
      if (offGraph(p)) { placeNames[key] = null; labelWaypoints(); return; }
      placeAsked[key] = true;
      getJSON('/nearest?point=' + key).then(function (fc) {
        placeNames[key] = fc.features.length ? fc.features[0].properties.name : null;
      }, function () { placeNames[key] = null; }).then(labelWaypoints);
    });
  }

  function drawMarkers() {
    markerLayer.clearLayers();
    var n = state.points.length;
    state.points.forEach(function (p, i) {
      var m = L.marker([p[1], p[0]], { icon: pinIcon(i, n), draggable: true, autoPan: true, keyboard: false });
      m.on('drag', function (e) {
        state.points[i] = [e.latlng.lng, e.latlng.lat];
        route(true);
      });
      m.on('dragend', function () { changed(); });
      m.on('contextmenu', function (e) { L.DomEvent.stop(e); removePoint(i); });
      m.bindTooltip(function () {
        return (i === 0 ? 'start' : i === n - 1 ? 'destination' : 'via ' + i + ' (right-click removes)') + ': ' +
          esc(placeLabel(state.points[i] || p));
      });
      markerLayer.addLayer(m);
    });
    var list = $('waypoints');
    list.innerHTML = '';
    state.points.forEach(function (p, i) {
      var li = document.createElement('li');
      li.innerHTML = '<b>' + (i === 0 ? 'A' : i === n - 1 && n > 1 ? 'B' : i) + '</b><span class="name" data-i="' + i +
        '" title="' + ll(p) + '">' + esc(placeLabel(p)) + '</span><button type="button" title="remove">×</button>';
      li.querySelector('button').onclick = function () { removePoint(i); };
      list.appendChild(li);
    });
  }

  function removePoint(i) {
    state.points.splice(i, 1);
    changed();
  }

  function setPoint(kind, latlng) {
    var p = [latlng.lng, latlng.lat];
    if (kind === 'start') {
      if (state.points.length) state.points[0] = p; else state.points.push(p);
    } else if (kind === 'dest') {
      if (state.points.length >= 2) state.points[state.points.length - 1] = p; else state.points.push(p);
    } else if (kind === 'via') {
      insertVia(p);
    } else if (state.points.length < 2) {
      state.points.push(p);
    } else {
      state.points[state.points.length - 1] = p;
    }
    changed();
  }

  /* Insert a via point where it makes the smallest detour between two consecutive waypoints. */
  function insertVia(p) {
    var pts = state.points;
    if (pts.length < 2) { pts.push(p); return; }
    var d = function (a, b) { return map.distance([a[1], a[0]], [b[1], b[0]]); };
    var best = 1, bestCost = Infinity;
    for (var i = 0; i + 1 < pts.length; i++) {
      var cost = d(pts[i], p) + d(p, pts[i + 1]) - d(pts[i], pts[i + 1]);
      if (cost < bestCost) { bestCost = cost; best = i + 1; }
    }
    pts.splice(best, 0, p);
  }

  function changed() {
    drawMarkers();
    writeHash();
    route(false).then(function () { if (window.StarrouteModel) window.StarrouteModel.update(); });
  }

  // -- routing -------------------------------------------------------------------------------------------------------
  function effectiveAlgorithm() {
    var alg = state.alg || (health && algorithms[0]) || 'ch';
    if (state.avoid.length && alg === 'ch') return algorithms.indexOf('alt') >= 0 ? 'alt' : algorithms[1] || alg;
    return alg;
  }

  function avoidParam() { return state.avoid.map(function (r) { return r.map(ll).join(';'); }).join('|'); }

  function nativeQuery(alg) {
    var pts = state.points, q = 'from=' + ll(pts[0]) + '&to=' + ll(pts[pts.length - 1]);
    if (pts.length > 2) q += '&via=' + pts.slice(1, -1).map(ll).join(';');
    q += '&algorithm=' + encodeURIComponent(alg);
    if (state.exclude.length) q += '&exclude=' + state.exclude.join(',');
    if (state.avoid.length) q += '&avoid=' + avoidParam();
    return q + departParam();
  }

  function osrmUrl() {
    var pts = state.points, q = '?steps=true&overview=full&geometries=geojson';
    if (pts.length === 2 && !timed()) q += '&alternatives=2';  // (none with a departure time)
    q += departParam();
    if (state.exclude.length) q += '&exclude=' + state.exclude.join(',');
    return '/route/v1/driving/' + pts.map(ll).join(';') + q;
  }

  var dragBusy = false, dragPending = false;

  /* Route through the waypoints: the line and figures from the native API with the chosen algorithm, the steps and
   * alternatives from the OSRM API (same waypoints and classes; it has no areas to avoid). `live`: while dragging,
   * at most one request in flight and no steps. */
  function route(live) {
    if (state.points.length < 2) { clearRoute(); status(''); nameWaypoints(); return Promise.resolve(); }
    if (live) {
      if (dragBusy) { dragPending = true; return Promise.resolve(); }
      dragBusy = true;
    } else {
      dragPending = false;  // the final route after a drag: no live one after it
    }
    var seq = ++routeSeq, alg = effectiveAlgorithm();
    var nat = getJSON('/route?' + nativeQuery(alg) + '&overview=full');
    var osrm = live || state.avoid.length ? Promise.resolve(null) : getJSON(osrmUrl());
    return Promise.all([nat, osrm.catch(function (e) { return { error: e }; })]).then(function (res) {
      if (seq !== routeSeq) return;
      drawRoute(res[0], res[1], alg, live);
      status('');
      if (!live && searchActive) compare();
    }).catch(function (err) {
      if (seq !== routeSeq) return;
      clearRoute();
      status(err.message, true);
      if (!live) { refit(); nameWaypoints(); }  // the point the message is about may be off the view
    }).then(function () {
      if (live) {
        dragBusy = false;
        if (dragPending) { dragPending = false; route(true); }
      }
    });
  }

  function clearRoute() {
    if (searchActive || searchRows.length) hideSearch();  // no search space of a route that is gone
    routeLayer.clearLayers();
    mainLine = null;
    bestSummary = '';
    showRoutes([]);
    $('summary').innerHTML = '';
    $('steps-note').textContent = '';
    $('map').removeAttribute('data-route');
  }

  function drawRoute(feature, osrm, alg, live) {
    routeLayer.clearLayers();
    window.starroute.last = feature;
    var p = feature.properties;
    L.geoJSON(feature, { style: { color: '#fff', weight: 9, opacity: 0.9 }, interactive: false }).addTo(routeLayer);
    var line = L.geoJSON(feature, { style: { color: '#1565c0', weight: 5, opacity: 0.9, className: 'sr-route' } });
    mainLine = line;
    line.on('click', function (e) {
      L.DomEvent.stop(e);
      if (mode) onMapClick(e); else setPoint('via', e.latlng);
    });
    line.bindTooltip('click to add a via point', { sticky: true });
    line.addTo(routeLayer);
    var chosen = state.alg || algorithms[0] || alg;
    var note = alg !== chosen ? ' (' + chosen + ' cannot avoid areas)' : '';
    $('summary').innerHTML = duration(p.duration_s) + ' · ' + distance(p.distance_m) +
      '<br><span class="muted">' + esc(alg) + note + ': ' + p.stats.settled.toLocaleString() +
      ' search nodes settled, ' + micros(p.stats) + '</span>';
    if (p.departure) {
      $('summary').innerHTML += '<br><span class="muted" id="times">departs ' + esc(clock(p.departure)) +
        ', arrives ' + esc(clock(p.arrival)) + '</span>';
    }
    bestSummary = $('summary').innerHTML;
    $('map').setAttribute('data-route', alg);
    (p.waypoints || []).forEach(function (w, i) {
      if (state.points[i]) placeNames[ll(state.points[i])] = w.name;
    });
    labelWaypoints();
    if (live) return;
    if (window.StarrouteDeparture) window.StarrouteDeparture.update();
    showRoutes([]);
    if (state.avoid.length) {
      $('steps-note').textContent = 'Turn-by-turn steps come from the OSRM API, which has no areas to avoid.';
    } else if (osrm && osrm.error) {
      $('steps-note').textContent = 'steps: ' + osrm.error.message;
    } else if (osrm) {
      $('steps-note').textContent = '';
      showRoutes(osrm.routes);
    }
    if (firstRoute) {
      firstRoute = false;
      if (performance.mark) performance.mark('sr-first-route');
    }
  }

  /* The OSRM API's routes, best first: with alternatives, a list of them all and their lines, each clickable to
   * select it (its line drawn as the route, its figures and steps shown; "best route" goes back). */
  function showRoutes(routes) {
    osrmRoutes = routes;
    selectRoute(0);
  }

  function selectRoute(k) {
    var routes = osrmRoutes, list = $('alternatives'), chosenLine = null;
    altLayer.clearLayers();
    list.innerHTML = '';
    $('steps').innerHTML = '';
    if (routes[k]) drawSteps(routes[k]);
    if (mainLine) {
      mainLine.setStyle(k ? { color: '#5f6f80', opacity: 0.6, dashArray: '8 6' } :
        { color: '#1565c0', opacity: 0.9, dashArray: null });
    }
    $('summary').innerHTML = k ? duration(routes[k].duration) + ' · ' + distance(routes[k].distance) +
      '<br><span class="muted">alternative ' + k + ' selected (OSRM API); "best route" below goes back</span>' :
      bestSummary;
    $('map').setAttribute('data-selected-route', String(k));
    if (routes.length < 2) return;
    routes.forEach(function (r, i) {
      var label = (i ? 'alternative ' + i : 'best route') + ': ' + duration(r.duration) + ' · ' + distance(r.distance);
      if (i) {
        var line = L.geoJSON(r.geometry, { style: i === k ?
          { color: '#1565c0', weight: 5, opacity: 0.9, className: 'sr-alternative sr-chosen' } :
          { color: '#5f6f80', weight: 5, opacity: 0.6, dashArray: '8 6', className: 'sr-alternative' } });
        line.bindTooltip(label + (i === k ? ' (selected)' : ' (click to select)'), { sticky: true });
        line.on('click', function (e) { L.DomEvent.stop(e); selectRoute(i === k ? 0 : i); });
        line.addTo(altLayer);
        if (i === k) chosenLine = line;
      }
      var li = document.createElement('li');
      li.textContent = label;
      li.className = i === k ? 'sel' : '';
      li.title = i === k ? 'shown' : 'click to show this route and its steps';
      li.onclick = function () { selectRoute(i); };
      list.appendChild(li);
    });
    altLayer.bringToBack();
    if (chosenLine) chosenLine.bringToFront();
  }

  var COMPASS = ['north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'];

  function instruction(step, lastLeg) {
    var m = step.maneuver, name = step.name || step.ref || '', onto = name ? ' onto ' + name : '';
    var mod = m.modifier || '';
    switch (m.type) {
      case 'depart':
        return 'Head ' + COMPASS[Math.round((m.bearing_after || 0) / 45) % 8] + (name ? ' on ' + name : '');
      case 'arrive':
        return lastLeg ? 'Arrive at your destination' : 'Arrive at the via point';
      case 'roundabout': case 'rotary':
        return 'Enter the roundabout' + (m.exit ? ' and take exit ' + m.exit : '') + onto;
      case 'exit roundabout': case 'exit rotary':
        return 'Exit the roundabout' + onto;
      case 'merge': return 'Merge ' + mod + onto;
      case 'on ramp': return 'Take the ramp' + (mod ? ' on the ' + mod.replace('slight ', '') : '') + onto;
      case 'off ramp': return 'Take the exit' + (mod ? ' on the ' + mod.replace('slight ', '') : '') + onto;
      case 'fork': return 'Keep ' + (mod.replace('slight ', '') || 'straight') + ' at the fork' + onto;
      case 'end of road': return 'At the end of the road turn ' + mod + onto;
      case 'new name': return 'Continue' + onto;
      case 'continue': return mod && mod !== 'straight' ? 'Continue ' + mod + onto : 'Continue straight' + onto;
      default:
        if (mod === 'uturn') return 'Make a U-turn' + onto;
        if (mod === 'straight') return 'Go straight' + onto;
        return 'Turn ' + mod + onto;
    }
  }

  function drawSteps(r) {
    var ol = $('steps');
    r.legs.forEach(function (leg, li) {
      leg.steps.forEach(function (s) {
        var item = document.createElement('li');
        item.innerHTML = '<span class="dist">' + (s.distance ? distance(s.distance) : '') + '</span>' +
          esc(instruction(s, li === r.legs.length - 1)) + (s.penalties || []).map(function (p) {
            return ' <span class="penalty" title="the profile charges this time to pass it">+' + duration(p.duration) +
              ': gate or barrier</span>';
          }).join('');
        var loc = s.maneuver.location;
        item.onclick = function () {
          map.setView([loc[1], loc[0]], Math.max(map.getZoom(), 17));
          L.popup().setLatLng([loc[1], loc[0]]).setContent(esc(instruction(s, li === r.legs.length - 1))).openOn(map);
        };
        ol.appendChild(item);
      });
    });
  }

  // -- search space --------------------------------------------------------------------------------------------------
  var SearchLayer = L.Layer.extend({
    initialize: function (options) { L.setOptions(this, options); },  // {small: true}: a side-by-side map's
    onAdd: function (m) {
      this._canvas = L.DomUtil.create('canvas', 'sr-search leaflet-zoom-hide');
      if (!this.options.small) this._canvas.id = 'search-canvas';
      this._front = L.DomUtil.create('canvas', 'sr-search leaflet-zoom-hide');
      var pane = m.getPane('sr-search') || m.getPanes().overlayPane;
      pane.appendChild(this._canvas);
      pane.appendChild(this._front);
      m.on('moveend zoomend resize viewreset', this._reset, this);
      this._n = this._n || 0;
      this._reset();
    },
    onRemove: function (m) {
      L.DomUtil.remove(this._canvas);
      L.DomUtil.remove(this._front);
      m.off('moveend zoomend resize viewreset', this._reset, this);
      this.stop();
    },
    /* points: [[lon, lat, direction], ...] in settle order (legs one after the other) */
    setData: function (points, algorithm) {
      this.stop();
      var n = points.length, mx = new Float64Array(n), my = new Float64Array(n), dir = new Uint8Array(n);
      for (var i = 0; i < n; i++) {
        var s = Math.sin(Math.max(-85.0511, Math.min(85.0511, points[i][1])) * Math.PI / 180);
        mx[i] = (points[i][0] + 180) / 360;
        my[i] = 0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI);
        dir[i] = points[i][2] || 0;
      }
      this._mx = mx; this._my = my; this._dir = dir; this._n = n; this._shown = n;
      if (this._canvas) {
        this._canvas.setAttribute('data-points', String(n));
        this._canvas.setAttribute('data-algorithm', algorithm || '');
        this._reset();
      }
    },
    _reset: function () {
      var m = this._map; if (!m) return;
      var size = m.getSize(), tl = m.containerPointToLayerPoint([0, 0]);
      [this._canvas, this._front].forEach(function (c) {
        L.DomUtil.setPosition(c, tl);
        c.width = size.x; c.height = size.y;
        c.style.width = size.x + 'px'; c.style.height = size.y + 'px';
      });
      this._draw(0, this._shown || 0);
    },
    _xy: function () {
      var m = this._map, z = m.getZoom(), scale = 256 * Math.pow(2, z), o = m.getPixelOrigin();
      var tl = m.containerPointToLayerPoint([0, 0]);
      return [scale, o.x + tl.x, o.y + tl.y];
    },
    _size: function () {
      var r = this._n < 300 ? 7 : this._n < 5000 ? 4 : this._map.getZoom() >= 16 ? 4 : 3;
      return this.options.small ? Math.max(2, r - 2) : r;
    },
    _draw: function (from, to) {
      var ctx = this._canvas.getContext('2d'), t = this._xy(), n = this._n, r = this._size(), h = r / 2;
      if (from === 0) ctx.clearRect(0, 0, this._canvas.width, this._canvas.height);
      if (r >= 7) {  // few points (CH): outline them so they stand out on any road colour
        ctx.fillStyle = '#fff';
        for (var w = from; w < to; w++) {
          ctx.fillRect(this._mx[w] * t[0] - t[1] - h - 1, this._my[w] * t[0] - t[2] - h - 1, r + 2, r + 2);
        }
      }
      var bins = RAMP.length * 8;
      for (var b = 0; b < bins; b++) {
        var lo = Math.max(from, Math.floor(b * n / bins)), hi = Math.min(to, Math.floor((b + 1) * n / bins));
        if (lo >= hi) continue;
        ctx.fillStyle = rampColour(b / (bins - 1));
        for (var i = lo; i < hi; i++) {
          ctx.fillRect(this._mx[i] * t[0] - t[1] - h, this._my[i] * t[0] - t[2] - h, r, r);
        }
      }
    },
    _frontier: function (from, to) {
      var ctx = this._front.getContext('2d'), t = this._xy(), r = this._size() + 4;
      ctx.clearRect(0, 0, this._front.width, this._front.height);
      ctx.fillStyle = '#ff1744';
      for (var i = Math.max(0, from); i < to; i++) {
        ctx.beginPath();
        ctx.arc(this._mx[i] * t[0] - t[1], this._my[i] * t[0] - t[2], r / 2, 0, 2 * Math.PI);
        ctx.fill();
      }
    },
    /* Animate the settle order: points appear in order, the most recent ones (the frontier) highlighted. */
    replay: function (ms, onEnd) {
      this.stop();
      var self = this, n = this._n, t0 = performance.now(), window_ = Math.max(3, Math.round(n / 40));
      this._shown = 0;
      this._draw(0, 0);
      var step = function (now) {
        var k = Math.min(n, Math.ceil((now - t0) / ms * n));
        if (k > self._shown) self._draw(self._shown, k);
        self._shown = k;
        self._frontier(k - window_, k);
        if (k < n) self._raf = requestAnimationFrame(step);
        else { self._raf = null; self._frontier(0, 0); if (onEnd) onEnd(); }
      };
      this._raf = requestAnimationFrame(step);
    },
    stop: function () {
      if (this._raf) cancelAnimationFrame(this._raf);
      this._raf = null;
      this._shown = this._n;
      if (this._front) this._frontier(0, 0);
    },
    count: function () { return this._n || 0; }
  });

  function rampColour(t) {
    var x = t * (RAMP.length - 1), i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
    var a = parseInt(RAMP[i].slice(1), 16), b = parseInt(RAMP[i + 1].slice(1), 16);
    var c = [16, 8, 0].map(function (s) { return Math.round(((a >> s) & 255) * (1 - f) + ((b >> s) & 255) * f); });
    return 'rgb(' + c.join(',') + ')';
  }

  /* Run every algorithm with trace=true on the current waypoints (one after the other), fill the table, show one. */
  function compare() {
    if (state.points.length < 2) { status('place a start and a destination first'); return Promise.resolve(); }
    searchActive = true;
    $('hide-search').disabled = false;
    var seq = ++searchSeq, q = nativeQuery, rows = [];
    $('search-note').textContent = 'searching…';
    var chain = Promise.resolve();
    algorithms.forEach(function (alg) {
      chain = chain.then(function () {
        if (seq !== searchSeq) return;
        if (state.avoid.length && alg === 'ch') {
          rows.push({ alg: alg, refused: 'cannot avoid areas' });
          return;
        }
        var t0 = performance.now();
        return getJSON('/route?' + q(alg) + '&overview=false&trace=true').then(function (f) {
          var pts = [], truncated = false, meet = [];
          f.properties.trace.forEach(function (leg) {
            for (var i = 0; i < leg.settled.length; i++) pts.push(leg.settled[i]);
            truncated = truncated || leg.truncated;
            if (leg.meeting) meet.push(leg.meeting);
          });
          rows.push({ alg: alg, stats: f.properties.stats, ms: performance.now() - t0, points: pts, meet: meet,
            truncated: truncated, duration: f.properties.duration_s });
        }, function (err) { rows.push({ alg: alg, refused: err.message }); });
      });
    });
    return chain.then(function () {
      if (seq !== searchSeq) return;
      searchRows = rows;
      renderTable();
      var has = function (a) { return rows.some(function (r) { return r.alg === a && r.points; }); };
      var show = [state.ss, effectiveAlgorithm()].filter(has)[0] ||
        (rows.filter(function (r) { return r.points; })[0] || {}).alg;
      if (show) showSearch(show);
      $('search-note').textContent = compareNote(rows);
      $('search-section').setAttribute('data-done', String(seq));
      $('side-by-side').disabled = false;
      if (state.sbs.length && window.StarrouteCompare) openSideBySide(state.sbs);
    });
  }

  /* What the comparison shows: the one duration every algorithm returned, or which answered and whether they
   * agree (a refused or failed row is no duration); the † of a time that includes compiling. */
  function compareNote(rows) {
    var ok = rows.filter(function (r) { return r.points; }), failed = rows.filter(function (r) { return !r.points; });
    var durations = [...new Set(ok.map(function (r) { return r.duration.toFixed(1) + ' s'; }))];
    var text;
    if (!ok.length) {
      text = 'No algorithm answered: see the rows.';
    } else if (!failed.length) {
      text = durations.length === 1 ? 'Every algorithm returns the same duration (' + durations[0] + ').' :
        'The algorithms return different durations (' + durations.join(', ') + ').';
    } else {
      text = ok.length + ' of ' + rows.length + ' algorithms answered (' + failed.map(function (r) {
        return r.alg;
      }).join(', ') + ': see ' + (failed.length > 1 ? 'their rows' : 'its row') + '); ' + (ok.length === 1 ?
        'it returns ' + durations[0] + '.' : durations.length === 1 ? 'those return the same duration (' +
        durations[0] + ').' : 'those return different durations (' + durations.join(', ') + ').');
    }
    if (ok.some(function (r) { return r.stats.compile_ms; })) {
      text += ' † The time includes compiling the search kernels on their first use since the server started: ' +
        'compare again for the searches alone.';
    }
    return text + (ok.length ? ' Click a row to show its settled nodes.' : '');
  }

  /* The search spaces of 2-6 algorithms at once on synchronised small maps, the table beside them. */
  function openSideBySide(algs) {
    var shown = searchRows.filter(function (r) { return r.points; });
    var want = (algs && algs.length ? algs : shown.map(function (r) { return r.alg; })).filter(function (a) {
      return shown.some(function (r) { return r.alg === a; });
    }).slice(0, 6);
    state.sbs = want;
    writeHash();
    StarrouteCompare.open({ rows: searchRows, chosen: want, health: health, route: window.starroute.last,
      points: state.points, tiles: roadsUrl(), bg: state.bg, background: backgroundUrl(), ramp: rampColour,
      SearchLayer: SearchLayer, view: map.getBounds(),
      onChange: function (chosen) { state.sbs = chosen; writeHash(); },
      onClose: function () { state.sbs = []; writeHash(); } });
  }

  /* What a settled count counts: search nodes, which on an edge-based graph are road arcs. */
  function searchNodesNote() {
    var g = (health && health.graph) || {}, c = g.counts || {};
    if (g.search_graph === 'edge') {
      return 'Counts are search nodes. This graph is searched edge-based (turn costs and restrictions): a search ' +
        'node is a road arc, one direction of a street between two junctions, so the search graph has ' +
        (g.search_nodes || 0).toLocaleString() + ' search nodes for ' + (c.nodes || 0).toLocaleString() +
        ' road nodes. Each dot is the end of a settled arc.';
    }
    return 'Counts are search nodes: the junctions of the road graph (' + (c.nodes || 0).toLocaleString() + ').';
  }

  function renderTable() {
    var tb = document.querySelector('#algos tbody');
    tb.innerHTML = '';
    $('search-nodes-note').textContent = searchNodesNote();
    searchRows.forEach(function (r) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-alg', r.alg);
      if (r.refused) {
        tr.innerHTML = '<td></td><td>' + esc(r.alg) + '</td><td colspan="4" class="muted">' + esc(r.refused) + '</td>';
      } else {
        tr.innerHTML = '<td><input type="radio" name="ss"' + (r.alg === state.ss ? ' checked' : '') + '></td><td>' +
          esc(r.alg) + '</td><td>' + r.stats.settled.toLocaleString() + (r.truncated ? '*' : '') + '</td><td>' +
          r.stats.relaxed.toLocaleString() + '</td><td' + (r.stats.compile_ms ? ' class="compiled" title="' +
          esc(compiled(r.stats)) + '">' : '>') + Math.round(r.stats.micros).toLocaleString() +
          (r.stats.compile_ms ? ' †' : '') + '</td><td>' + r.ms.toFixed(0) + '</td>';
        tr.onclick = function () { showSearch(r.alg); };
      }
      tb.appendChild(tr);
    });
  }

  function showSearch(alg) {
    var r = searchRows.filter(function (x) { return x.alg === alg; })[0];
    if (!r || !r.points) return;
    state.ss = alg;
    if (!map.hasLayer(searchLayer)) searchLayer.addTo(map);
    searchLayer.setData(r.points, alg);
    meetLayer.clearLayers();
    r.meet.forEach(function (p) {
      L.circleMarker([p[1], p[0]], { radius: 8, color: '#000', weight: 2, fill: false, interactive: false })
        .addTo(meetLayer);
    });
    document.querySelectorAll('#algos tbody tr').forEach(function (tr) {
      var on = tr.getAttribute('data-alg') === alg;
      tr.classList.toggle('sel', on);
      var radio = tr.querySelector('input');
      if (radio) radio.checked = on;
    });
    $('replay').disabled = false;
    $('search-legend').hidden = false;
    if (r.truncated) $('search-note').textContent = '* the trace lists the first settled nodes only';
    writeHash();
  }

  function hideSearch() {
    searchActive = false;
    searchSeq++;
    searchRows = [];
    state.sbs = [];
    if (window.StarrouteCompare) StarrouteCompare.close();
    $('side-by-side').disabled = true;
    $('search-section').removeAttribute('data-done');
    map.removeLayer(searchLayer);
    meetLayer.clearLayers();
    document.querySelector('#algos tbody').innerHTML = '';
    $('search-note').textContent = '';
    $('search-nodes-note').textContent = '';
    $('search-legend').hidden = true;
    $('replay').disabled = true;
    $('hide-search').disabled = true;
    writeHash();
  }

  // -- areas to avoid ------------------------------------------------------------------------------------------------
  function drawAreas() {
    areaLayer.clearLayers();
    state.avoid.forEach(function (ring, i) {
      var poly = L.polygon(ring.map(function (p) { return [p[1], p[0]]; }),
        { color: '#c62828', weight: 2, fillOpacity: 0.18, dashArray: '4 3', className: 'sr-area' });
      poly.bindTooltip('area to avoid (right-click removes)');
      poly.on('contextmenu', function (e) {
        L.DomEvent.stop(e);
        state.avoid.splice(i, 1);
        drawAreas();
        changed();
      });
      areaLayer.addLayer(poly);
    });
    $('areas-info').textContent = state.avoid.length ? state.avoid.length + ' area' +
      (state.avoid.length > 1 ? 's' : '') : '';
  }

  function startDrawing() {
    if (mode === 'draw') { finishDrawing(true); return; }
    setMode('draw');
    drawing = [];
    status('click the corners of the area; click the first corner or double-click to finish, Esc cancels');
  }

  function finishDrawing(cancel) {
    if (!cancel && drawing.length >= 3) {
      state.avoid.push(drawing.map(function (p) { return [p.lng, p.lat]; }));
      drawAreas();
      changed();
    }
    drawing = [];
    drawLayer.clearLayers();
    setMode(null);
    status('');
  }

  function drawClick(latlng) {
    if (drawing.length >= 3) {
      var first = map.latLngToContainerPoint(drawing[0]), here = map.latLngToContainerPoint(latlng);
      if (first.distanceTo(here) < 12) { finishDrawing(false); return; }
    }
    var last = drawing[drawing.length - 1];
    if (last && map.latLngToContainerPoint(last).distanceTo(map.latLngToContainerPoint(latlng)) < 4) return;
    drawing.push(latlng);  // (a double click's two clicks add one corner)
    drawLayer.clearLayers();
    L.polyline(drawing, { color: '#c62828', weight: 2, dashArray: '4 3' }).addTo(drawLayer);
    drawing.forEach(function (p) { L.circleMarker(p, { radius: 4, color: '#c62828' }).addTo(drawLayer); });
  }

  function setMode(m) {
    mode = m;
    $('draw-area').classList.toggle('active', m === 'draw');
    $('iso-pick').classList.toggle('active', m === 'iso');
    L.DomUtil[m ? 'addClass' : 'removeClass'](map.getContainer(), 'sr-drawing');
    if (m === 'draw') map.doubleClickZoom.disable(); else map.doubleClickZoom.enable();
  }

  // -- isochrones ----------------------------------------------------------------------------------------------------
  var isoSeq = 0;

  function isochrone() {
    isoLayer.clearLayers();
    $('iso-info').textContent = '';
    isoLegend([]);
    if (!state.iso) return Promise.resolve();
    var p = state.iso, seq = ++isoSeq;
    var marker = L.marker([p[1], p[0]], { draggable: true, keyboard: false,
      icon: L.divIcon({ className: '', iconSize: [14, 14], html: '<div class="sr-iso-pin"></div>' }) });
    marker.on('dragend', function (e) {
      var q = e.target.getLatLng();
      state.iso = [q.lng, q.lat];
      writeHash();
      isochrone();
    });
    marker.addTo(isoLayer);
    var url = '/isochrone?point=' + ll(p) + '&minutes=' + encodeURIComponent(isoMinutes()) +
      (state.reverse ? '&reverse=true' : departParam()) +  // an isochrone with a time departs from its point
      (state.exclude.length ? '&exclude=' + state.exclude.join(',') : '');
    var at = timed() ? (state.reverse ? ' (no time: an isochrone with one departs from its point)' :
      ', leaving ' + DAYS[state.dep.day] + ' ' + quarter(state.dep.q)) : '';
    $('iso-info').textContent = '…';
    return getJSON(url).then(function (fc) {
      if (seq !== isoSeq) return;
      var n = fc.features.length;
      fc.features.forEach(function (f, i) {  // largest first
        var c = ISO_COLOURS[Math.min(ISO_COLOURS.length - 1, i + Math.max(0, ISO_COLOURS.length - n - 1))];
        L.geoJSON(f, { style: { color: '#6a1b9a', weight: 1, fillColor: c, fillOpacity: 0.22, className: 'sr-iso' },
          interactive: false, pane: 'sr-iso' }).addTo(isoLayer);
      });
      $('iso-info').textContent = fc.features.map(function (f) { return f.properties.value; }).reverse().join(', ') +
        ' min ' + (state.reverse ? 'to' : 'from') + ' here' + at;
      isoLegend(fc.features.map(function (f, i) {
        return [ISO_COLOURS[Math.min(ISO_COLOURS.length - 1, i + Math.max(0, ISO_COLOURS.length - n - 1))],
          f.properties.value];
      }).reverse());
    }).catch(function (err) {
      if (seq === isoSeq) { $('iso-info').textContent = ''; status(err.message, true); }
    });
  }

  /* Default isochrone limits sized to the graph: about a quarter, half and whole of the time to cross its box at
   * 30 km/h, in round minutes (Monaco: 2, 4, 8; a city: 5, 10, 20), so the bands do not all cover the whole map. */
  function isoMinutes() {
    if (state.minutes) return state.minutes;
    var b = (health && health.graph && health.graph.bbox) || null;
    if (!b) return '5,10,15';
    var km = L.latLng(b[1], b[0]).distanceTo(L.latLng(b[3], b[2])) / 1000, cross = km / 30 * 60;
    var nice = [1, 2, 3, 4, 5, 8, 10, 15, 20, 30, 45, 60, 90, 120, 180];
    var pick = function (x) {
      for (var i = 0; i < nice.length; i++) if (nice[i] >= x) return nice[i];
      return nice[nice.length - 1];
    };
    var out = [];
    [cross / 4, cross / 2, cross].forEach(function (x) { var m = pick(x); if (out.indexOf(m) < 0) out.push(m); });
    return out.join(',');
  }

  function isoLegend(bands) {
    var el = $('iso-legend');
    el.innerHTML = bands.map(function (b) {
      return '<span><i style="background:' + b[0] + '"></i>' + b[1] + ' min</span>';
    }).join('');
    el.hidden = !bands.length;
  }

  // -- context menu --------------------------------------------------------------------------------------------------
  function menu(e) {
    var el = $('menu'), items = [
      ['start here', function () { setPoint('start', e.latlng); }],
      ['via point here', function () { setPoint('via', e.latlng); }],
      ['destination here', function () { setPoint('dest', e.latlng); }],
      ['isochrone from here', function () { state.iso = [e.latlng.lng, e.latlng.lat]; state.reverse = false;
        $('iso-reverse').checked = false; writeHash(); isochrone(); }],
      ['isochrone to here', function () { state.iso = [e.latlng.lng, e.latlng.lat]; state.reverse = true;
        $('iso-reverse').checked = true; writeHash(); isochrone(); }]
    ];
    el.innerHTML = '';
    items.forEach(function (it) {
      var d = document.createElement('div');
      d.textContent = it[0];
      d.onclick = function () { el.hidden = true; it[1](); };
      el.appendChild(d);
    });
    el.style.left = e.originalEvent.clientX + 'px';
    el.style.top = e.originalEvent.clientY + 'px';
    el.hidden = false;
  }

  // -- set-up --------------------------------------------------------------------------------------------------------
  function setupControls() {
    var sel = $('algorithm');
    algorithms.forEach(function (a) {
      var o = document.createElement('option');
      o.value = a; o.textContent = a;
      sel.appendChild(o);
    });
    if (state.alg && algorithms.indexOf(state.alg) < 0) state.alg = null;
    sel.value = state.alg || algorithms[0];
    sel.onchange = function () { state.alg = sel.value; writeHash(); route(false); };

    var sets = (health.excludable || EXCLUDABLE[profile] || []);
    var classes = [];
    sets.forEach(function (s) { s.forEach(function (c) { if (classes.indexOf(c) < 0) classes.push(c); }); });
    var box = $('exclude');
    if (classes.length) box.appendChild(document.createTextNode('avoid'));
    classes.forEach(function (c) {
      var lab = document.createElement('label'), cb = document.createElement('input');
      cb.type = 'checkbox'; cb.value = c; cb.checked = state.exclude.indexOf(c) >= 0;
      cb.onchange = function () {
        var want = classes.filter(function (k) { return box.querySelector('input[value="' + k + '"]').checked; });
        var offered = sets.some(function (s) {
          return s.length === want.length && s.every(function (k) { return want.indexOf(k) >= 0; });
        });
        if (want.length && !offered) {  // one of the profile's sets at a time: keep the class just ticked
          want = cb.checked ? [c] : [];
          box.querySelectorAll('input').forEach(function (x) { x.checked = want.indexOf(x.value) >= 0; });
        }
        state.exclude = want;
        writeHash();
        route(false);
        if (state.iso) isochrone();
      };
      lab.appendChild(cb);
      lab.appendChild(document.createTextNode(' ' + (CLASS_LABEL[c] || c)));
      box.appendChild(lab);
    });

    $('reverse').onclick = function () { state.points.reverse(); changed(); };
    $('clear').onclick = function () { state.points = []; changed(); };
    $('draw-area').onclick = startDrawing;
    $('clear-areas').onclick = function () { state.avoid = []; drawAreas(); changed(); };
    $('compare').onclick = function () { compare(); };
    $('replay').onclick = function () {
      var btn = $('replay');
      btn.disabled = true;
      searchLayer.replay(Math.min(6000, 1500 + searchLayer.count() / 20), function () { btn.disabled = false; });
    };
    $('hide-search').onclick = hideSearch;
    $('status').onclick = function () { status(''); };
    $('iso-minutes').value = isoMinutes();
    $('iso-reverse').checked = state.reverse;
    $('iso-minutes').onchange = function () {
      state.minutes = this.value.replace(/\s+/g, '') || null;
      writeHash();
      isochrone();
    };
    $('iso-reverse').onchange = function () { state.reverse = this.checked; writeHash(); isochrone(); };
    $('iso-pick').onclick = function () {
      setMode(mode === 'iso' ? null : 'iso');
      status(mode === 'iso' ? 'click the map where the isochrone starts' : '');
    };
    $('iso-clear').onclick = function () { state.iso = null; writeHash(); isochrone(); };
    $('bg-colour').value = state.bg;
    $('bg-colour').onchange = function () {
      state.bg = this.value;
      roads.restyle(state.bg);
      roadLegend();
      writeHash();
    };
    $('side-by-side').onclick = function () { openSideBySide(state.sbs); };
    roadLegend();
  }

  /* The road colours in use: classes with their casing, or the speed ramp. */
  function roadLegend() {
    var el = $('road-legend'), st = StarrouteMVT.styles;
    if (state.bg === 'speed') {
      var stops = [5, 30, 50, 70, 100].map(function (k) { return st.speedColour(k); });
      el.innerHTML = '<div class="legend"><span>5</span><i style="background:linear-gradient(to right,' +
        stops.join(',') + ')"></i><span>100+ km/h</span></div>';
      return;
    }
    el.innerHTML = st.legend.map(function (c) {
      var s = st.CLASS_STYLE[c[0]];
      return '<span><i style="background:' + s[0] + ';border-color:' + (s[2] || s[0]) +
        (c[0] === 'ferry' ? ';border-style:dashed' : '') + '"></i>' + esc(c[1]) + '</span>';
    }).join('');
  }

  function onMapClick(e) {
    $('menu').hidden = true;
    if (mode === 'draw') drawClick(e.latlng);
    else if (mode === 'iso') {
      state.iso = [e.latlng.lng, e.latlng.lat];
      setMode(null);
      status('');
      writeHash();
      isochrone();
    } else setPoint('auto', e.latlng);
  }

  function fingerprint() { return ((health.graph || {}).fingerprint || '').slice(0, 16); }
  function roadsUrl() { return '/tile/{z}/{x}/{y}.mvt?v=' + fingerprint(); }
  /* The light background drawn from the same extract (water, land use, parks, buildings), when it was built. */
  function backgroundUrl() {
    return (health.graph || {}).basemap ? '/bgtile/{z}/{x}/{y}.mvt?v=' + fingerprint() : null;
  }

  function setupMap(view) {
    map = L.map('map', { zoomControl: true, maxZoom: 19, minZoom: 2, preferCanvas: false });
    map.createPane('sr-iso').style.zIndex = 350;  // isochrones under the route and areas (overlay pane: 400)
    map.createPane('sr-search').style.zIndex = 450;  // settled nodes over them, under the markers (600)
    map.getPane('sr-search').style.pointerEvents = 'none';
    map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
    var bgUrl = backgroundUrl();
    if (bgUrl && L.starrouteBackground) background = L.starrouteBackground(bgUrl).addTo(map);
    roads = L.starrouteRoads(roadsUrl(), { colour: state.bg,
      attribution: 'roads: © OpenStreetMap contributors (ODbL), drawn by starroute' });
    roads.on('firsttile', function () { if (performance.mark) performance.mark('sr-first-tile'); });
    roads.addTo(map);
    altLayer = L.featureGroup().addTo(map);
    routeLayer = L.featureGroup().addTo(map);
    areaLayer = L.featureGroup().addTo(map);
    isoLayer = L.featureGroup().addTo(map);
    drawLayer = L.featureGroup().addTo(map);
    meetLayer = L.featureGroup().addTo(map);
    markerLayer = L.featureGroup().addTo(map);
    searchLayer = new SearchLayer();
    var bbox = (health.graph || {}).bbox;
    if (view) map.setView([view[1], view[2]], view[0]);
    else if (state.points.length >= 2) map.fitBounds(state.points.map(function (p) { return [p[1], p[0]]; }),
      { padding: [40, 40] });
    else if (bbox) map.fitBounds([[bbox[1], bbox[0]], [bbox[3], bbox[2]]], { padding: [-60, -60] });  // may crop
    else map.setView([0, 0], 2);

    map.on('click', onMapClick);
    map.on('dblclick', function () { if (mode === 'draw') finishDrawing(false); });
    map.on('contextmenu', function (e) { if (!mode) menu(e); });
    map.on('movestart', function () { $('menu').hidden = true; });
    map.on('moveend', writeHash);
    var last = 0;
    map.on('mousemove', function (e) {
      var now = performance.now();
      if (now - last < 60) return;
      last = now;
      if (mode === 'draw' && drawing.length) {
        drawLayer.eachLayer(function (l) { if (l instanceof L.Polyline) l.setLatLngs(drawing.concat([e.latlng])); });
      }
      var r = roads.roadAt(e.latlng, 6);
      $('hover').textContent = r ? [r.name || '(no name)', r.ref, r['class'], (r.speed || 0) + ' km/h',
        r.oneway ? 'one-way' : '', r.is_small ? 'small component' : ''].filter(Boolean).join(' · ') : '\u00a0';
    });
    document.addEventListener('keydown', function (e) {
      if (e.key === 'Escape') { $('menu').hidden = true; if (mode === 'draw') finishDrawing(true); else setMode(null); }
      if (e.key === 'Enter' && mode === 'draw') finishDrawing(false);
    });
  }

  function start() {
    var view = readHash();
    return getJSON('/health').then(function (h) {
      health = h;
      algorithms = h.algorithms || [];
      profile = (h.graph || {}).profile || 'car';
      var c = (h.graph || {}).counts || {};
      $('graph-info').textContent = profile + ' graph of ' + (((h.graph || {}).source || {}).name || '?') + ': ' +
        (c.nodes || 0).toLocaleString() + ' road nodes, ' + (c.arcs || 0).toLocaleString() + ' arcs' +
        ((h.graph || {}).search_graph === 'edge' ? '; searched edge-based (' +
          ((h.graph || {}).search_nodes || 0).toLocaleString() + ' search nodes)' : '');
      setupMap(view);
      setupControls();
      drawAreas();
      drawMarkers();
      writeHash();
      var jobs = [route(false), isochrone()];
      if (state.ss) jobs.push(compare());
      return Promise.all(jobs);
    }).catch(function (err) { status(err.message, true); });
  }

  window.addEventListener('hashchange', function () {  // the user edited the URL (replaceState fires none)
    readHash();
    $('algorithm').value = state.alg || algorithms[0];
    $('exclude').querySelectorAll('input').forEach(function (x) { x.checked = state.exclude.indexOf(x.value) >= 0; });
    $('iso-minutes').value = isoMinutes();
    if (window.StarrouteDeparture) window.StarrouteDeparture.sync();
    drawAreas();
    drawMarkers();
    refit();
    if (!state.ss && searchActive) hideSearch();  // the URL no longer shows a search space
    route(false);
    if (state.ss && !searchActive && state.points.length >= 2) compare();
    isochrone();
  });

  /* Show the edited URL's points (a point it got wrong may be far off the current view). */
  function refit() {
    var pts = state.points.concat(state.iso ? [state.iso] : []);
    if (!pts.length) return;
    var b = L.latLngBounds(pts.map(function (p) { return [p[1], p[0]]; }));
    if (!map.getBounds().contains(b)) map.fitBounds(b, { padding: [40, 40], maxZoom: 17 });
  }

  window.starroute = {
    get map() { return map; }, get roads() { return roads; }, get background() { return background; },
    get search() { return searchLayer; }, state: state,
    get pending() { return pending; },
    get health() { return health; }, getJSON: getJSON, isochrone: isochrone, writeHash: writeHash, timed: timed, departAt: departAt,
    quarter: quarter, days: DAYS, fmtDuration: duration,
    /* the current waypoints and classes as native /route parameters, without algorithm or time (the chart's) */
    routeQuery: function () { return nativeQuery(effectiveAlgorithm()).replace(/&depart_at=[^&]*/, ''); },
    compare: compare, showSearch: showSearch, route: route, ready: null, last: null
  };
  window.starroute.ready = start();
})();
