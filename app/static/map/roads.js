/* starroute road background: decodes the server's Mapbox Vector Tiles (/tile/{z}/{x}/{y}.mvt, layer "speeds") and
 * draws them on canvas tiles of a Leaflet GridLayer. Plain JS, no dependency but Leaflet; shared by the map page and
 * the OSRM client page.
 *
 * Why not a vendored MVT renderer: the tiles have one layer of lines with a handful of properties, so a ~100-line
 * protobuf reader and a canvas painter do the job, draw a city tile in a few milliseconds (tile coordinates map to
 * canvas pixels by one scale factor: no per-point projection) and add no third-party code.
 */
(function (global) {
  'use strict';

  // -- a minimal protobuf / MVT reader ------------------------------------------------------------------------------
  function Reader(buf) { this.b = buf; this.p = 0; }
  Reader.prototype.varint = function () {
    var b = this.b, r = 0, s = 1, c;
    do { c = b[this.p++]; r += (c & 0x7f) * s; s *= 128; } while (c >= 0x80);
    return r;
  };
  Reader.prototype.skip = function (wt) {
    if (wt === 0) this.varint();
    else if (wt === 2) this.p += this.varint();
    else if (wt === 1) this.p += 8;
    else if (wt === 5) this.p += 4;
    else throw new Error('MVT: wire type ' + wt);
  };
  var UTF8 = new TextDecoder();
  function str(r) { var n = r.varint(), s = UTF8.decode(r.b.subarray(r.p, r.p + n)); r.p += n; return s; }

  function view(r, n) { return new DataView(r.b.buffer, r.b.byteOffset + r.p, n); }

  function readValue(r, end) {
    var v = null;
    while (r.p < end) {
      var k = r.varint(), f = k >> 3, wt = k & 7;
      if (f === 1) v = str(r);
      else if (f === 5 || f === 4) v = r.varint();
      else if (f === 6) { var z = r.varint(); v = (z % 2) ? -(z + 1) / 2 : z / 2; }
      else if (f === 7) v = !!r.varint();
      else if (f === 3 && wt === 1) { v = view(r, 8).getFloat64(0, true); r.p += 8; }
      else if (f === 2 && wt === 5) { v = view(r, 4).getFloat32(0, true); r.p += 4; }
      else r.skip(wt);
    }
    return v;
  }

  /* Decode one tile: {layerName: {extent, features: [{props, geom: Int32Array x, y, x, y..., parts}]}}; line k of a
   * feature is points parts[k] .. parts[k + 1] - 1. */
  function decode(arrayBuffer) {
    var r = new Reader(new Uint8Array(arrayBuffer)), layers = {};
    while (r.p < r.b.length) {
      var key = r.varint();
      if (key >> 3 !== 3) { r.skip(key & 7); continue; }
      var end = r.varint() + r.p, name = '', extent = 4096, keys = [], values = [], raw = [];
      while (r.p < end) {
        var k = r.varint(), f = k >> 3;
        if (f === 1) name = str(r);
        else if (f === 2) { var n = r.varint(); raw.push([r.p, r.p + n]); r.p += n; }
        else if (f === 3) keys.push(str(r));
        else if (f === 4) { var e = r.varint() + r.p; values.push(readValue(r, e)); r.p = e; }
        else if (f === 5) extent = r.varint();
        else r.skip(k & 7);
      }
      var features = raw.map(function (span) { return readFeature(r, span[0], span[1], keys, values); });
      r.p = end;
      layers[name] = { extent: extent, features: features };
    }
    return layers;
  }

  function readFeature(r, start, end, keys, values) {
    r.p = start;
    var props = {}, geom = null, parts = [], type = 0;
    while (r.p < end) {
      var k = r.varint(), f = k >> 3;
      if (f === 2) {
        var te = r.varint() + r.p;
        while (r.p < te) { var ki = r.varint(), vi = r.varint(); props[keys[ki]] = values[vi]; }
      } else if (f === 3) type = r.varint();
      else if (f === 4) {
        var ge = r.varint() + r.p, out = [], x = 0, y = 0;
        while (r.p < ge) {
          var c = r.varint(), cmd = c & 7, cnt = c >> 3;
          if (cmd === 7) continue;  // ClosePath
          if (cmd === 1) parts.push(out.length / 2);
          for (var i = 0; i < cnt; i++) {
            var dx = r.varint(), dy = r.varint();
            x += (dx % 2) ? -(dx + 1) / 2 : dx / 2;
            y += (dy % 2) ? -(dy + 1) / 2 : dy / 2;
            out.push(x, y);
          }
        }
        geom = Int32Array.from(out);
      } else r.skip(k & 7);
    }
    parts.push(geom ? geom.length / 2 : 0);
    return { type: type, props: props, geom: geom || new Int32Array(0), parts: parts };
  }

  // -- styles --------------------------------------------------------------------------------------------------------
  var CLASS_STYLE = {  // colour, width at zoom 16 (px), casing
    motorway: ['#e4879a', 5, '#b85a70'], motorway_link: ['#e4879a', 3, '#b85a70'],
    trunk: ['#f2a58a', 5, '#c27a5d'], trunk_link: ['#f2a58a', 3, '#c27a5d'],
    primary: ['#f8cf8f', 4.5, '#bf9a5a'], primary_link: ['#f8cf8f', 3, '#bf9a5a'],
    secondary: ['#f1f3b4', 4, '#a9ab70'], secondary_link: ['#f1f3b4', 2.5, '#a9ab70'],
    tertiary: ['#ffffff', 3.5, '#a8a29a'], tertiary_link: ['#ffffff', 2.5, '#a8a29a'],
    unclassified: ['#ffffff', 3, '#b5aea5'], residential: ['#ffffff', 3, '#b5aea5'], road: ['#ffffff', 3, '#b5aea5'],
    living_street: ['#ededed', 2.5, '#c0bab2'], service: ['#ffffff', 1.6, '#c3bdb5'], track: ['#c9b38e', 1.2, null],
    ferry: ['#6f8fd6', 1.5, null], shuttle_train: ['#8a8a8a', 1.5, null], pedestrian: ['#e6e3ef', 1.6, '#c3bdb5']
  };
  var DEFAULT_STYLE = ['#ffffff', 1.5, '#c3bdb5'];

  function speedColour(kmh) {  // slow red -> fast green, as OSRM's debug map
    var t = Math.max(0, Math.min(1, (kmh - 5) / 95));
    return 'hsl(' + Math.round(t * 130) + ',80%,' + Math.round(45 + 5 * (1 - t)) + '%)';
  }

  function widthAt(base, z) { return Math.max(0.6, base * Math.pow(1.45, z - 16)); }

  // -- the layer -----------------------------------------------------------------------------------------------------
  /* L.starrouteRoads(url, {colour: 'class'|'speed', onFirstTile}) -> a canvas GridLayer of the road network. */
  var RoadLayer = L.GridLayer.extend({
    options: { colour: 'class', updateWhenZooming: false, keepBuffer: 2, maxZoom: 22, className: 'sr-roads',
      layer: 'speeds' },

    initialize: function (url, options) {
      this._url = url;
      L.GridLayer.prototype.initialize.call(this, options);
      this.stats = { tiles: 0, features: 0, bytes: 0, ms: 0 };
      this.on('tileunload', function (e) { if (e.tile._abort) e.tile._abort.abort(); });
    },

    createTile: function (coords, done) {
      var tile = L.DomUtil.create('canvas', 'sr-tile'), size = this.getTileSize(), dpr = global.devicePixelRatio || 1;
      tile.width = Math.round(size.x * dpr);
      tile.height = Math.round(size.y * dpr);
      var url = L.Util.template(this._url, coords), self = this, t0 = performance.now();
      var ctl = typeof AbortController !== 'undefined' ? new AbortController() : null;
      tile._abort = ctl;
      fetch(url, ctl ? { signal: ctl.signal } : {}).then(function (resp) {
        if (!resp.ok) throw new Error('tile ' + url + ': HTTP ' + resp.status);
        return resp.arrayBuffer();
      }).then(function (buf) {
        tile._abort = null;
        tile._roads = decode(buf)[self.options.layer] || { extent: 4096, features: [] };
        tile._z = coords.z;
        self._draw(tile);
        self.stats.tiles += 1;
        self.stats.features += tile._roads.features.length;
        self.stats.bytes += buf.byteLength;
        self.stats.ms += performance.now() - t0;
        if (self.stats.tiles === 1) self.fire('firsttile', { ms: performance.now() });
        done(null, tile);
      }).catch(function (err) {
        if (err && err.name === 'AbortError') return;
        console.warn(err);  // eslint-disable-line no-console
        done(err, tile);
      });
      return tile;
    },

    /* Redraw every loaded tile (after a style change), without fetching again. */
    restyle: function (colour) {
      this.options.colour = colour;
      for (var key in this._tiles) if (this._tiles[key].el._roads) this._draw(this._tiles[key].el);
    },

    _draw: function (tile) {
      var ctx = tile.getContext('2d'), data = tile._roads, z = tile._z, feats = data.features;
      var scale = tile.width / data.extent, dpr = tile.width / this.getTileSize().x;
      var bySpeed = this.options.colour === 'speed';
      ctx.clearRect(0, 0, tile.width, tile.height);
      ctx.lineCap = 'round';
      ctx.lineJoin = 'round';
      var cased = z >= 13, passes = cased && !bySpeed ? [0, 1] : [1];  // casing under the fill from zoom 13
      for (var p = 0; p < passes.length; p++) {
        for (var i = 0; i < feats.length; i++) {
          var f = feats[i], st = CLASS_STYLE[f.props['class']] || DEFAULT_STYLE, w = widthAt(st[1], z) * dpr;
          if (passes[p] === 0) {
            if (!st[2]) continue;
            ctx.strokeStyle = st[2];
            ctx.lineWidth = w + 1.5 * dpr;
          } else if (bySpeed) {
            ctx.strokeStyle = speedColour(f.props.speed || 0);
            ctx.lineWidth = Math.max(w, 1.5 * dpr);
          } else {  // without casing (low zoom) the darker casing colour, at least a pixel wide
            ctx.strokeStyle = cased ? st[0] : st[2] || st[0];
            ctx.lineWidth = cased ? w : Math.max(w + 0.4 * dpr, dpr);
          }
          ctx.setLineDash(f.props['class'] === 'ferry' ? [4 * dpr, 4 * dpr] : []);
          ctx.beginPath();
          var g = f.geom, parts = f.parts;
          for (var q = 0; q + 1 < parts.length; q++) {
            var a = parts[q], b = parts[q + 1];
            ctx.moveTo(g[2 * a] * scale, g[2 * a + 1] * scale);
            for (var j = a + 1; j < b; j++) ctx.lineTo(g[2 * j] * scale, g[2 * j + 1] * scale);
          }
          ctx.stroke();
        }
      }
    },

    /* The road nearest to a map point within `px` pixels: its properties, or null (for the hover line). */
    roadAt: function (latlng, px) {
      var map = this._map; if (!map) return null;
      var z = map.getZoom(), size = this.getTileSize(), pt = map.project(latlng, z);
      var tx = Math.floor(pt.x / size.x), ty = Math.floor(pt.y / size.y), t = this._tiles[tx + ':' + ty + ':' + z];
      if (!t || !t.el._roads) return null;
      var data = t.el._roads, s = data.extent / size.x, x = (pt.x - tx * size.x) * s, y = (pt.y - ty * size.y) * s;
      var best = null, bestD = (px || 6) * s;
      bestD *= bestD;
      for (var i = data.features.length - 1; i >= 0; i--) {
        var f = data.features[i], g = f.geom, parts = f.parts;
        for (var q = 0; q + 1 < parts.length; q++) {
          for (var j = parts[q]; j + 1 < parts[q + 1]; j++) {
            var d = segDist2(x, y, g[2 * j], g[2 * j + 1], g[2 * j + 2], g[2 * j + 3]);
            if (d < bestD) { bestD = d; best = f.props; }
          }
        }
      }
      return best;
    }
  });

  function segDist2(px, py, ax, ay, bx, by) {
    var dx = bx - ax, dy = by - ay, l = dx * dx + dy * dy, t = l ? ((px - ax) * dx + (py - ay) * dy) / l : 0;
    t = Math.max(0, Math.min(1, t));
    var ex = ax + t * dx - px, ey = ay + t * dy - py;
    return ex * ex + ey * ey;
  }

  // -- the background: water, land use, parks, buildings (layer "background" of /bgtile/), quiet under the roads ----
  var AREA_STYLE = {  // fill, outline (buildings), from which zoom
    water: ['#c9dde6', null, 0], wetland: ['#dbe8e3', null, 12], wood: ['#d3e2c4', null, 0],
    park: ['#dceccf', null, 0], grass: ['#e2eed8', null, 12], farmland: ['#efefdc', null, 10],
    residential: ['#eeebe6', null, 12], commercial: ['#f0e8e6', null, 12], industrial: ['#ebe6ec', null, 12],
    cemetery: ['#dde6d5', null, 13], beach: ['#f4eed8', null, 12], rail: ['#e8e4e1', null, 13],
    building: ['#e0d9d2', '#cfc6bd', 15]
  };
  var AREA_ORDER = ['farmland', 'residential', 'commercial', 'industrial', 'rail', 'cemetery', 'grass', 'park',
    'wood', 'wetland', 'beach', 'water', 'building'];

  var BackgroundLayer = RoadLayer.extend({
    options: { layer: 'background', className: 'sr-background', zIndex: 0, updateWhenZooming: false, keepBuffer: 1,
      maxZoom: 22 },
    _draw: function (tile) {
      var ctx = tile.getContext('2d'), data = tile._roads, z = tile._z, feats = data.features;
      var scale = tile.width / data.extent, dpr = tile.width / this.getTileSize().x;
      ctx.clearRect(0, 0, tile.width, tile.height);
      for (var o = 0; o < AREA_ORDER.length; o++) {
        var kind = AREA_ORDER[o], st = AREA_STYLE[kind];
        if (z < st[2]) continue;
        ctx.beginPath();
        var any = false;
        for (var i = 0; i < feats.length; i++) {
          var f = feats[i];
          if (f.props.kind !== kind) continue;
          any = true;
          var g = f.geom, parts = f.parts;
          for (var q = 0; q + 1 < parts.length; q++) {
            var a = parts[q], b = parts[q + 1];
            ctx.moveTo(g[2 * a] * scale, g[2 * a + 1] * scale);
            for (var j = a + 1; j < b; j++) ctx.lineTo(g[2 * j] * scale, g[2 * j + 1] * scale);
            ctx.closePath();
          }
        }
        if (!any) continue;
        ctx.fillStyle = st[0];
        ctx.fill('evenodd');
        if (st[1] && z >= 16) { ctx.strokeStyle = st[1]; ctx.lineWidth = dpr; ctx.stroke(); }
      }
    },
    roadAt: function () { return null; }
  });

  // what the legend shows (class, label), in the order of importance
  var LEGEND = [['motorway', 'motorway'], ['trunk', 'trunk'], ['primary', 'primary'], ['secondary', 'secondary'],
    ['tertiary', 'tertiary'], ['residential', 'street'], ['living_street', 'living street'], ['service', 'service'],
    ['track', 'track'], ['ferry', 'ferry']];

  L.starrouteRoads = function (url, options) { return new RoadLayer(url, options); };
  L.starrouteBackground = function (url, options) { return new BackgroundLayer(url, options); };
  global.StarrouteMVT = { decode: decode,
    styles: { CLASS_STYLE: CLASS_STYLE, speedColour: speedColour, legend: LEGEND, AREA_STYLE: AREA_STYLE } };
})(window);
