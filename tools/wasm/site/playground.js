// The playground page: picks a lesson (lessons/NAME.json, a copy of scenarios/lessons/NAME.json),
// applies the knobs to its JSON, runs it in the simulator compiled to WebAssembly (rsim.js,
// tools/wasm/playground.cpp) and shows the report it renders, the summaries and the verdicts.
// URL: ?lesson=NAME&run=1 runs a lesson on load; the knobs can be given the same way
// (protocol, assignor, consumers, session, heartbeat, poll, static, processing, incident,
// incident_at, incident_for, seed), and rebalance=N opens rebalance N in the report's step
// control. The page's state for tests is on <html>: data-ready, data-exit, data-run-ms,
// data-lanes, data-rebalances, data-partitions, data-errors, data-opened.
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var root = document.documentElement;
  var params = new URLSearchParams(location.search);
  var sim = null;
  var lessonName = '';
  var lessonText = '';
  var editor = null;
  var knobIds = {protocol: 'k-protocol', assignor: 'k-assignor', consumers: 'k-consumers', session: 'k-session',
                 heartbeat: 'k-heartbeat', poll: 'k-poll', static: 'k-static', processing: 'k-processing',
                 incident: 'k-incident', incident_at: 'k-incident-at', incident_for: 'k-incident-for'};
  var CLASSIC_ONLY = ['session.timeout.ms', 'heartbeat.interval.ms', 'partition.assignment.strategy'];

  function status(text) { $('status').textContent = text; }
  function scenarioPath() { return 'scenarios/lessons/' + lessonName + '.json'; }

  function showErrors(list) {
    var ul = $('errors');
    ul.textContent = '';
    list.forEach(function (e) { var li = document.createElement('li'); li.textContent = e; ul.appendChild(li); });
    if (list.length) root.dataset.errors = String(list.length); else delete root.dataset.errors;
  }

  function knobs() {
    var k = {};
    Object.keys(knobIds).forEach(function (name) { k[name] = $(knobIds[name]).value.trim(); });
    return k;
  }
  function anyKnob(k) { return Object.keys(k).some(function (n) { return k[n] !== '' && n !== 'incident_at' && n !== 'incident_for'; }); }

  // The consumer's config for one protocol family: the common config, or config_by_protocol.X.
  function byProtocol(c, family) {
    c.config_by_protocol = c.config_by_protocol || {};
    c.config_by_protocol[family] = c.config_by_protocol[family] || {};
    return c.config_by_protocol[family];
  }

  // The lesson's JSON with the knobs applied (a new object).
  function applyKnobs(doc, k) {
    var d = JSON.parse(JSON.stringify(doc));
    delete d.expect;
    delete d.regression;
    if (k.protocol) d.protocols = [k.protocol];
    var n = k.consumers ? Math.max(1, Math.min(50, parseInt(k.consumers, 10))) : d.consumers.length;
    var starts = (d.events || []).filter(function (e) { return e.do === 'start'; });
    if (n < d.consumers.length) {
      var keep = {};
      d.consumers = d.consumers.slice(0, n);
      d.consumers.forEach(function (c) { keep[c.name] = true; });
      d.events = d.events.filter(function (e) { return !e.consumer || keep[e.consumer]; });
    } else {
      var last = d.consumers[d.consumers.length - 1];
      var lastStart = starts.length ? starts[starts.length - 1].at_ms : 1000;
      var had = d.consumers.length;
      d.events = d.events || [];
      for (var i = had; i < n; ++i) {
        var c = JSON.parse(JSON.stringify(last));
        c.name = 'C' + (i + 1);
        c.config = c.config || {};
        if (c.config['client.id']) c.config['client.id'] = c.name;
        if (c.config['group.instance.id']) c.config['group.instance.id'] = c.name.toLowerCase();
        d.consumers.push(c);
        // The new consumers start 100 ms apart after the lesson's last start.
        d.events.push({at_ms: Math.min(d.duration_ms, lastStart + 100 * (i - had + 1)), do: 'start', consumer: c.name});
      }
    }
    d.consumers.forEach(function (c) {
      c.config = c.config || {};
      // Classic-only keys go where every protocol accepts them.
      CLASSIC_ONLY.forEach(function (key) {
        if (key in c.config) { byProtocol(c, 'classic')[key] = c.config[key]; delete c.config[key]; }
      });
      if ('group.remote.assignor' in c.config) { byProtocol(c, 'consumer')['group.remote.assignor'] = c.config['group.remote.assignor']; delete c.config['group.remote.assignor']; }
      // uniform is the broker's (consumer protocol); range is both the client's and the broker's.
      if (k.assignor === 'uniform' || k.assignor === 'range') byProtocol(c, 'consumer')['group.remote.assignor'] = k.assignor;
      if (k.assignor && k.assignor !== 'uniform') byProtocol(c, 'classic')['partition.assignment.strategy'] = k.assignor;
      if (k.session) byProtocol(c, 'classic')['session.timeout.ms'] = parseInt(k.session, 10);
      if (k.heartbeat) byProtocol(c, 'classic')['heartbeat.interval.ms'] = parseInt(k.heartbeat, 10);
      if (k.poll) c.config['max.poll.interval.ms'] = parseInt(k.poll, 10);
      if (k.static === 'on') c.config['group.instance.id'] = c.name.toLowerCase();
      if (k.static === 'off') delete c.config['group.instance.id'];
      if (k.processing) c.processing = {per_record_ms: parseFloat(k.processing)};
    });
    if (k.incident) {
      var victim = d.consumers[d.consumers.length - 1].name;
      var at = k.incident_at ? parseInt(k.incident_at, 10) : Math.floor(d.duration_ms / 2);
      if (k.incident === 'crash') d.events.push({at_ms: at, do: 'crash', consumer: victim});
      else d.events.push({at_ms: at, do: 'stall', consumer: victim, for_ms: k.incident_for ? parseInt(k.incident_for, 10) : 20000});
    }
    return d;
  }

  function refreshScenario() {
    var k = knobs();
    if (editor) editor.schedule();
    if (!anyKnob(k)) { $('scenario').value = lessonText; return; }
    try {
      $('scenario').value = JSON.stringify(applyKnobs(JSON.parse(lessonText), k), null, 2) + '\n';
    } catch (e) {
      showErrors(['the knobs could not be applied: ' + e.message]);
    }
  }

  function showLesson(text) {
    var doc = JSON.parse(text);
    $('description').textContent = doc.description || '';
    var ol = $('watch');
    ol.textContent = '';
    ((doc.lesson && doc.lesson.watch_for) || []).forEach(function (step) {
      var li = document.createElement('li'); li.textContent = step; ol.appendChild(li);
    });
  }

  function loadLesson(name) {
    lessonName = name;
    return fetch('lessons/' + encodeURIComponent(name) + '.json').then(function (r) {
      if (!r.ok) throw new Error('lesson "' + name + '" not found');
      return r.text();
    }).then(function (text) {
      lessonText = text;
      showLesson(text);
      refreshScenario();
    });
  }

  function download(name, text) {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], {type: 'application/json'}));
    a.download = name;
    a.textContent = 'download ' + name;
    return a;
  }

  function showResult(result) {
    var verdicts = $('verdicts'), list = $('summary-list');
    verdicts.textContent = '';
    list.textContent = '';
    result.variants.forEach(function (v) {
      var s = JSON.parse(v.summary);
      var p = document.createElement('p');
      p.textContent = v.protocol + ': ' + (s.verdict || (s.metrics.rebalance_count + ' rebalances'));
      verdicts.appendChild(p);
      v.failed_expectations.forEach(function (f) {
        var q = document.createElement('p'); q.className = 'failed'; q.textContent = 'FAILED ' + f; verdicts.appendChild(q);
      });
      var h = document.createElement('h3');
      h.textContent = v.protocol + '/summary.json ';
      h.appendChild(download(v.protocol + '-summary.json', v.summary));
      var pre = document.createElement('pre');
      pre.className = 'summary';
      pre.dataset.protocol = v.protocol;
      pre.textContent = v.summary;
      list.appendChild(h);
      list.appendChild(pre);
    });
    var frame = $('report');
    frame.onload = function () {
      var doc = frame.contentDocument, html = doc.documentElement;
      root.dataset.lanes = html.dataset.lanes || String(doc.querySelectorAll('[data-consumer]').length);
      root.dataset.rebalances = html.dataset.rebalances || String(doc.querySelectorAll('[data-rebalance]').length);
      root.dataset.partitions = String(doc.querySelectorAll('[data-partition]').length);
      // ?rebalance=N: the step control opens rebalance N instead of the lesson's (report.html's
      // #rebalance=N); data-opened says which one each variant's step control walks.
      if (params.has('rebalance') && frame.contentWindow.rsimOpenRebalance)
        frame.contentWindow.rsimOpenRebalance(params.get('rebalance'));
      if (html.dataset.opened !== undefined) root.dataset.opened = html.dataset.opened;
      frame.style.height = Math.max(400, html.scrollHeight + 20) + 'px';
      root.dataset.ready = '1';
      if (params.get('timing') === '1') console.info('rsim-timing shown ' + lessonName);
    };
    frame.srcdoc = result.report;
  }

  function run() {
    if (!sim) return;
    showErrors([]);
    delete root.dataset.ready;
    status('running…');
    var seed = $('k-seed').value.trim();
    var text = $('scenario').value;
    $('ran-scenario').textContent = text;
    $('ran-download').textContent = '';
    $('ran-download').appendChild(download(lessonName + '.json', text));
    // ?timing=1: two console lines around the run, whose real-time stamps in Chromium's log
    // measure it where the page's own clock cannot (headless Chromium's virtual time).
    var timing = params.get('timing') === '1';
    if (timing) console.info('rsim-timing start ' + lessonName);
    var t0 = performance.now();
    var raw = (timing ? sim.run_timed : sim.run)(scenarioPath(), text, seed);
    if (timing) console.info('rsim-timing wasm ' + lessonName + ' ' + raw.length + ' bytes');
    var result = JSON.parse(raw);
    var ms = performance.now() - t0;
    if (timing) console.info('rsim-timing parsed ' + lessonName);
    root.dataset.exit = String(result.exit);
    root.dataset.runMs = ms.toFixed(0);
    if (result.exit === 2 || result.exit === 3) {
      // As `rebalance-sim run` prints them: "FILE: PROBLEM".
      showErrors(result.errors.map(function (e) { return scenarioPath() + ': ' + e; }));
      status('not run: ' + result.errors.length + ' problem' + (result.errors.length === 1 ? '' : 's'));
      root.dataset.ready = '1';
      return;
    }
    status('ran in ' + ms.toFixed(0) + ' ms' + (result.exit === 1 ? ' (an assertion failed)' : ''));
    showResult(result);
  }

  function start() {
    Object.keys(knobIds).forEach(function (name) {
      if (params.has(name)) $(knobIds[name]).value = params.get(name);
      $(knobIds[name]).addEventListener('change', refreshScenario);
    });
    if (params.has('seed')) $('k-seed').value = params.get('seed');
    $('lesson').addEventListener('change', function () { loadLesson($('lesson').value); });
    $('reset').addEventListener('click', function () {
      Object.keys(knobIds).forEach(function (name) { $(knobIds[name]).value = ''; });
      $('scenario').value = lessonText;
      showErrors([]);
      if (editor) editor.schedule();
    });
    editor = RsimEditor.attach({
      textarea: $('scenario'), live: $('live'), hint: $('hint'), schemaUrl: 'schema.json', fileName: scenarioPath,
      validate: function (text) {
        if (!sim) return null;
        var r = JSON.parse(sim.validate(scenarioPath(), text));
        return r.exit === 0 ? [] : r.errors;
      }
    });
    $('run').addEventListener('click', run);
    var simReady = createRsim().then(function (m) {
      sim = m;
      $('version').textContent = 'rebalance-sim ' + m.version();
    });
    var lessonsReady = fetch('lessons/index.json').then(function (r) { return r.json(); }).then(function (names) {
      names.forEach(function (n) { var o = document.createElement('option'); o.value = n; o.textContent = n; $('lesson').appendChild(o); });
      var wanted = params.get('lesson');
      if (wanted && names.indexOf(wanted) < 0) throw new Error('no lesson "' + wanted + '"; lessons: ' + names.join(', '));
      $('lesson').value = wanted || names[0];
      return loadLesson($('lesson').value);
    });
    Promise.all([simReady, lessonsReady]).then(function () {
      $('run').disabled = false;
      status('ready');
      // ?edit=FROM~TO replaces FROM by TO in the editor as typing would (an input event), and
      // ?caret=TEXT puts the cursor after TEXT: how the browser test drives the editor's help.
      var area = $('scenario');
      if (params.has('edit')) {
        var e = params.get('edit'), cut = e.indexOf('~');
        area.value = area.value.replace(e.slice(0, cut), e.slice(cut + 1));
        area.dispatchEvent(new Event('input'));
      }
      if (params.has('caret')) {
        var at = area.value.indexOf(params.get('caret'));
        if (at >= 0) area.selectionStart = area.selectionEnd = at + params.get('caret').length;
        area.dispatchEvent(new Event('keyup'));
      }
      editor.check();
      if (params.get('run') === '1') run();
    }).catch(function (e) {
      showErrors([String(e.message || e)]);
      status('failed to load');
      root.dataset.ready = '1';
    });
  }
  start();
})();
