// The scenario editor's help (docs/playground.md): as you type, the simulator compiled to
// WebAssembly checks the text with its own loader (the messages `rebalance-sim validate`
// prints: file, JSON path, what is wrong, a suggestion), and the project's JSON schema
// (schema.json, a copy of scenarios/schema.json) tells which keys fit where the cursor is, with
// their descriptions; a key is inserted with a click. No library: a small scanner finds the JSON
// path at the cursor, the schema is walked through $ref, allOf, oneOf and anyOf.
// State for tests on <html>: data-live-checks (validations done), data-live-errors (problems
// listed; 0 when the text is valid), data-hint-path (the JSON path at the cursor),
// data-hint-keys (keys offered).
var RsimEditor = (function () {
  'use strict';
  var root = document.documentElement;

  // The JSON path of the container the cursor is in, whether the cursor is where a key goes,
  // the key typed so far, the key whose value the cursor is on, and that object's keys and
  // string values (the whole object, also after the cursor). Tolerates unfinished text.
  function analyse(text, caret) {
    var stack = [], at = null;
    function path() { return stack.slice(1).map(function (f) { return f.seg; }); }
    function top() { return stack[stack.length - 1]; }
    function mark(partial, inString) {
      if (at) return;
      var f = top();
      at = {path: f ? path() : [], frame: f || null, inKey: !!(f && f.obj && f.expectKey), partial: partial,
            key: f && f.obj && !f.expectKey ? f.key : null, inString: inString};
    }
    var i = 0, n = text.length;
    while (i < n) {
      if (i === caret) mark('', false);
      var c = text[i];
      if (c === '"') {
        var j = i + 1, s = '';
        while (j < n && text[j] !== '"') {
          if (text[j] === '\\' && j + 1 < n) { s += text[j + 1]; j += 2; } else { s += text[j]; j += 1; }
          if (j === caret && !at) mark(text.slice(i + 1, j), true);
        }
        if (caret > i && caret <= j && !at) mark(text.slice(i + 1, caret), true);
        var f = top();
        if (f && f.obj && f.expectKey) { f.key = s; f.keys[s] = true; }
        else if (f && f.obj && f.key !== null) f.vals[f.key] = s;
        i = j + 1;
        continue;
      }
      var t = top();
      if (c === '{' || c === '[') {
        var seg = t ? (t.obj ? t.key : t.idx) : null;
        stack.push({obj: c === '{', expectKey: c === '{', key: null, idx: 0, keys: {}, vals: {}, seg: seg});
      } else if (c === '}' || c === ']') {
        stack.pop();
      } else if (c === ':' && t && t.obj) {
        t.expectKey = false;
      } else if (c === ',' && t) {
        if (t.obj) { t.expectKey = true; t.key = null; } else t.idx += 1;
      }
      i += 1;
    }
    if (!at) mark('', false);
    return at;
  }

  function pointer(path) {
    return path.length ? '/' + path.map(function (s) { return String(s).replace(/~/g, '~0').replace(/\//g, '~1'); }).join('/') : '/';
  }

  function Schema(doc) { this.doc = doc; }
  Schema.prototype.ref = function (ref) {
    if (ref.indexOf('#/') !== 0) return null;
    var node = this.doc;
    ref.slice(2).split('/').forEach(function (p) { node = node ? node[p.replace(/~1/g, '/').replace(/~0/g, '~')] : null; });
    return node;
  };
  // The object schemas a node stands for: through $ref, allOf, oneOf and anyOf; a oneOf branch
  // whose `do` (or other) constant disagrees with the object's string values is left out.
  Schema.prototype.branches = function (node, vals, depth) {
    var self = this, out = [];
    depth = depth || 0;
    if (!node || typeof node !== 'object' || depth > 12) return out;
    out.push(node);  // first: its own description before the one of what it refers to
    if (node.$ref) out = out.concat(this.branches(this.ref(node.$ref), vals, depth + 1));
    ['allOf', 'oneOf', 'anyOf'].forEach(function (k) {
      (node[k] || []).forEach(function (b) {
        var bs = self.branches(b, vals, depth + 1);
        if (k !== 'allOf' && vals && !self.fits(bs, vals)) return;
        out = out.concat(bs);
      });
    });
    return out;
  };
  Schema.prototype.fits = function (branches, vals) {
    return branches.every(function (b) {
      return !b.properties || Object.keys(b.properties).every(function (k) {
        var p = b.properties[k];
        if (!(k in vals) || !p) return true;
        if ('const' in p) return p.const === vals[k];
        if (p.enum && p.enum.length === 1) return p.enum[0] === vals[k];
        return true;
      });
    });
  };
  // The schema of the value at `path` (segments: keys and array indexes).
  Schema.prototype.at = function (path) {
    var node = this.doc, self = this;
    for (var k = 0; k < path.length && node; ++k) {
      var seg = path[k], next = null;
      this.branches(node, null).some(function (b) {
        if (typeof seg === 'number') { if (b.items) next = b.items; }
        else if (b.properties && b.properties[seg]) next = b.properties[seg];
        else if (b.patternProperties) Object.keys(b.patternProperties).some(function (re) {
          if (new RegExp(re).test(seg)) next = b.patternProperties[re];
          return !!next;
        });
        if (!next && typeof seg !== 'number' && b.additionalProperties && typeof b.additionalProperties === 'object') next = b.additionalProperties;
        return !!next;
      });
      node = next;
    }
    return node;
  };
  // What the schema says of one value: its description (through $ref), type, enum, default.
  Schema.prototype.describe = function (node) {
    var d = {description: '', type: '', values: null, dflt: undefined};
    this.branches(node, null).forEach(function (b) {
      if (!d.description && b.description) d.description = b.description;
      if (!d.type && typeof b.type === 'string') d.type = b.type;
      if (!d.values && b.enum) d.values = b.enum;
      if (d.dflt === undefined && 'default' in b) d.dflt = b.default;
    });
    return d;
  };
  // The keys an object at `path` may hold (those of every branch that fits its values), each
  // with its description, in the schema's order.
  Schema.prototype.keys = function (path, vals) {
    var node = this.at(path), self = this, seen = {}, out = [];
    if (!node) return out;
    this.branches(node, vals).forEach(function (b) {
      Object.keys(b.properties || {}).forEach(function (k) {
        if (seen[k] || k === '$schema') return;
        seen[k] = true;
        out.push({key: k, about: self.describe(b.properties[k]).description});
      });
    });
    return out;
  };

  // Wires the help to a textarea: `validate(text)` returns the loader's messages ([] when valid,
  // or null while the simulator is not loaded), `fileName()` the path the messages name.
  function attach(opts) {
    var area = opts.textarea, live = opts.live, hint = opts.hint, schema = null, timer = null, checks = 0;
    fetch(opts.schemaUrl).then(function (r) { return r.json(); }).then(function (doc) {
      schema = new Schema(doc);
      showHint();
    }).catch(function () { hint.textContent = 'the schema could not be loaded'; });

    function check() {
      if (timer) clearTimeout(timer);
      timer = null;
      var problems = opts.validate(area.value);
      if (problems === null) return;
      checks += 1;
      root.dataset.liveChecks = String(checks);
      root.dataset.liveErrors = String(problems.length);
      live.textContent = '';
      live.className = problems.length ? 'live bad' : 'live ok';
      if (!problems.length) { live.textContent = '\u2713 ' + opts.fileName() + ': ok'; return; }
      var ul = document.createElement('ul');
      problems.forEach(function (p) { var li = document.createElement('li'); li.textContent = opts.fileName() + ': ' + p; ul.appendChild(li); });
      live.appendChild(ul);
    }
    function schedule() { if (timer) clearTimeout(timer); timer = setTimeout(check, 250); }

    function insert(key) {
      var a = analyse(area.value, area.selectionStart);
      var from = area.selectionStart - (a.inString ? a.partial.length + 1 : 0);
      var to = area.selectionEnd;
      if (a.inString) { var close = area.value.indexOf('"', to); if (close >= 0 && close - to < 200) to = close + 1; }
      var text = '"' + key + '": ';
      area.value = area.value.slice(0, from) + text + area.value.slice(to);
      area.selectionStart = area.selectionEnd = from + text.length;
      area.focus();
      area.dispatchEvent(new Event('input'));
    }

    function showHint() {
      if (!schema) return;
      var a = analyse(area.value, area.selectionStart);
      hint.textContent = '';
      var where = document.createElement('div');
      where.className = 'where';
      where.textContent = 'at ' + pointer(a.path) + (a.key !== null && a.key !== undefined ? ' \u2192 ' + a.key : '');
      hint.appendChild(where);
      root.dataset.hintPath = pointer(a.path);
      var offered = 0;
      if (a.key !== null && a.key !== undefined && !a.inKey) {
        var d = schema.describe(schema.at(a.path.concat([a.key])));
        var p = document.createElement('p');
        p.className = 'about';
        p.textContent = a.key + (d.type ? ' (' + d.type + ')' : '') + ': ' + (d.description || 'not in the schema') +
          (d.values ? ' Values: ' + d.values.join(', ') + '.' : '') + (d.dflt !== undefined ? ' Default: ' + JSON.stringify(d.dflt) + '.' : '');
        hint.appendChild(p);
      } else if (a.frame && a.frame.obj) {
        var present = a.frame.keys, partial = a.inKey ? a.partial : '';
        var keys = schema.keys(a.path, a.frame.vals).filter(function (k) {
          return (!present[k.key] || k.key === partial) && k.key.indexOf(partial) === 0;
        });
        var box = document.createElement('div');
        box.className = 'keys';
        keys.forEach(function (k) {
          var b = document.createElement('button');
          b.type = 'button';
          b.className = 'key';
          b.textContent = k.key;
          b.title = k.about;
          b.dataset.key = k.key;
          b.addEventListener('mousedown', function (e) { e.preventDefault(); insert(k.key); });
          box.appendChild(b);
        });
        offered = keys.length;
        if (!keys.length) box.textContent = partial ? 'no key of the schema starts with "' + partial + '" here' : 'no more keys here';
        hint.appendChild(box);
      }
      root.dataset.hintKeys = String(offered);
    }

    area.addEventListener('input', function () { schedule(); showHint(); });
    ['keyup', 'click', 'focus'].forEach(function (ev) { area.addEventListener(ev, showHint); });
    area.addEventListener('keydown', function (e) {
      // Ctrl+Space: the first key offered.
      if (e.key === ' ' && e.ctrlKey) {
        var first = hint.querySelector('button.key');
        if (first) { e.preventDefault(); insert(first.dataset.key); }
      }
    });
    return {check: check, schedule: schedule, showHint: showHint};
  }

  return {analyse: analyse, Schema: Schema, attach: attach, pointer: pointer};
})();
