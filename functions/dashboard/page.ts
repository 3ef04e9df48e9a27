/**
 * The dashboard page: one HTML document with its CSS and plain JavaScript inline
 * (no build step, no external requests). It polls /dashboard/api/state once a
 * second and draws tables and inline SVG charts; pause and resume call the admin
 * API with the admin key the operator typed (kept in sessionStorage only).
 */

export interface PageOptions {
  readonly adminPath: string;
  /** The state endpoint needs the admin key too. */
  readonly needsKey: boolean;
}

export function dashboardPage(options: PageOptions): string {
  const config = JSON.stringify({
    adminPath: options.adminPath,
    needsKey: options.needsKey,
    stateUrl: '/dashboard/api/state',
  }).replace(/</g, '\\u003c');
  return PAGE.replace('/*CONFIG*/null', config);
}

const PAGE = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice dashboard</title>
<style>
  :root { --bg:#f4f5f7; --card:#fff; --ink:#1d2330; --muted:#6b7385; --line:#e3e6ec; --ok:#1f9d61; --bad:#d64545; --warn:#d98a1c; --blue:#3d6fd9; --res:#1d2330; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; background:var(--bg); color:var(--ink); }
  header { display:flex; align-items:center; gap:16px; padding:12px 20px; background:#141a26; color:#fff; flex-wrap:wrap; }
  header h1 { font-size:18px; margin:0; font-weight:600; letter-spacing:.2px; }
  header .sub { color:#aab3c5; font-size:13px; }
  #status { margin-left:auto; font-size:13px; color:#aab3c5; }
  #status .dot { display:inline-block; width:9px; height:9px; border-radius:50%; background:#888; margin-right:6px; vertical-align:middle; }
  #status.live .dot { background:#3ddc84; }
  #status.down .dot { background:var(--bad); }
  #key-form { display:flex; gap:6px; align-items:center; font-size:12px; }
  #key-form input { width:170px; padding:3px 6px; border-radius:4px; border:1px solid #3a4458; background:#1f2736; color:#fff; }
  #key-form button { font-size:12px; }
  #alerts { padding:0 20px; }
  .banner { margin:10px 0 0; padding:8px 12px; border-radius:6px; background:#fdecec; border:1px solid #f3b9b9; color:#8d1f1f; font-size:13px; }
  .banner b { text-transform:uppercase; font-size:11px; letter-spacing:.5px; margin-right:6px; }
  main { display:grid; grid-template-columns: repeat(12, 1fr); gap:14px; padding:14px 20px 24px; }
  .card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; min-width:0; }
  .card h2 { font-size:13px; margin:0 0 8px; text-transform:uppercase; letter-spacing:.6px; color:var(--muted); font-weight:600; }
  .w7 { grid-column: span 7; } .w5 { grid-column: span 5; } .w6 { grid-column: span 6; } .w4 { grid-column: span 4; } .w8 { grid-column: span 8; } .w12 { grid-column: span 12; }
  @media (max-width: 1000px) { .w4,.w5,.w6,.w7,.w8 { grid-column: span 12; } }
  table { width:100%; border-collapse:collapse; font-variant-numeric: tabular-nums; }
  th, td { text-align:right; padding:4px 6px; border-bottom:1px solid var(--line); white-space:nowrap; }
  th:first-child, td:first-child { text-align:left; }
  th { font-size:11px; color:var(--muted); font-weight:600; text-transform:uppercase; letter-spacing:.4px; }
  td.name { font-weight:600; overflow:hidden; text-overflow:ellipsis; max-width:220px; }
  tr.top td.name::before { content:"\25B2 "; color:var(--bad); font-size:10px; }
  .num-bad { color:var(--bad); } .num-warn { color:var(--warn); } .num-ok { color:var(--ok); }
  .pill { display:inline-block; padding:1px 7px; border-radius:9px; font-size:11px; background:#e9edf5; color:#44506a; }
  .pill.paused { background:#fdecec; color:#a32020; } .pill.active { background:#e3f5ec; color:#17734a; }
  button.act { font-size:12px; padding:2px 10px; border-radius:4px; border:1px solid #c7ccd6; background:#fff; cursor:pointer; }
  button.act.pause { border-color:#e0a4a4; color:#a32020; } button.act.resume { border-color:#9fd3b8; color:#17734a; }
  button.act:disabled { opacity:.5; cursor:default; }
  .empty { color:var(--muted); font-size:13px; padding:6px 0; }
  .tier { margin-bottom:10px; } .tier-head { display:flex; justify-content:space-between; font-size:13px; margin-bottom:2px; }
  .tier-head span { color:var(--muted); }
  svg { display:block; width:100%; }
  .legend { display:flex; gap:14px; font-size:12px; color:var(--muted); margin-bottom:6px; }
  .legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px; vertical-align:-1px; }
  .bar-row { display:grid; grid-template-columns: 140px 1fr 88px; gap:8px; align-items:center; font-size:12px; margin:3px 0; }
  .bar-row .label { overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
  .bar-row .val { text-align:right; color:var(--muted); font-variant-numeric: tabular-nums; }
  ul.log { list-style:none; margin:0; padding:0; font-size:12px; max-height:260px; overflow:auto; }
  ul.log li { padding:4px 0; border-bottom:1px solid var(--line); }
  ul.log time { color:var(--muted); margin-right:6px; font-variant-numeric: tabular-nums; }
  ul.log .k { font-weight:600; margin-right:4px; } ul.log .k.alert { color:var(--bad); } ul.log .k.warning { color:var(--warn); }
  #toast { position:fixed; bottom:16px; right:16px; background:#141a26; color:#fff; padding:8px 14px; border-radius:6px; font-size:13px; opacity:0; transition:opacity .2s; }
  #toast.show { opacity:.95; }
</style>
</head>
<body>
<header>
  <h1>Sluice</h1><span class="sub">live flow: who is bursting, what waits, what was absorbed</span>
  <form id="key-form" autocomplete="off"><label for="admin-key">admin key</label><input id="admin-key" type="password" placeholder="for pause / resume"><button type="submit">use</button></form>
  <div id="status"><span class="dot"></span><span id="status-text">connecting...</span></div>
</header>
<div id="alerts"></div>
<main>
  <section class="card w6"><h2>Bursting now (requests offered, last <span id="window-s">10</span> s)</h2>
    <table id="tenants"><thead><tr><th>tenant</th><th>req/s</th><th>admitted</th><th>refused</th><th>warned</th><th>queued</th><th>state</th><th></th></tr></thead><tbody></tbody></table>
  </section>
  <section class="card w6"><h2>Top accounts</h2>
    <table id="accounts"><thead><tr><th>account</th><th>tenant</th><th>tier</th><th>req/s</th><th>admitted</th><th>refused</th><th></th></tr></thead><tbody></tbody></table>
  </section>
  <section class="card w8"><h2>Absorbed vs refused per tier (per second, last <span id="history-span">5 min</span>)</h2>
    <div class="legend"><span><i style="background:var(--ok)"></i>absorbed (held, then served)</span><span><i style="background:var(--bad)"></i>refused (429)</span><span><i style="background:var(--blue)"></i>completed</span></div>
    <div id="history"></div>
  </section>
  <section class="card w4"><h2>GPU slots in use vs reserved share</h2>
    <div class="legend"><span><i style="background:var(--blue)"></i>in use</span><span><i style="background:var(--res)"></i>reserved share</span></div>
    <div id="gpu"></div>
  </section>
  <section class="card w6"><h2>Reservoir depth per LiteTopic</h2><div id="topics"></div></section>
  <section class="card w6"><h2>Recent warnings and alerts</h2><ul class="log" id="warnings"></ul></section>
  <section class="card w6"><h2>Burst bookings (active and upcoming)</h2><div id="bookings"></div></section>
  <section class="card w6"><h2>Paused</h2><div id="paused"></div></section>
  <section class="card w6"><h2>Instances (policy last read)</h2><div id="instances"></div></section>
</main>
<div id="toast"></div>
<script>
(function () {
  'use strict';
  var CONFIG = /*CONFIG*/null;
  var KEY_STORE = 'sluice.adminKey';
  var state = null;
  var busy = {};

  // The key may come in the URL fragment (never sent to a server): #key=...
  var m = /(?:^#|&)key=([^&]+)/.exec(location.hash);
  if (m) { sessionStorage.setItem(KEY_STORE, decodeURIComponent(m[1])); history.replaceState(null, '', location.pathname + location.search); }
  function adminKey() { return sessionStorage.getItem(KEY_STORE) || ''; }
  function authHeaders() { var k = adminKey(); return k ? { authorization: 'Bearer ' + k } : {}; }

  document.getElementById('key-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var input = document.getElementById('admin-key');
    if (input.value) sessionStorage.setItem(KEY_STORE, input.value.trim());
    input.value = '';
    toast('admin key set for this tab');
    poll();
  });

  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; }); }
  function fmt(n) { return n >= 1000 ? (n / 1000).toFixed(n >= 10000 ? 0 : 1) + 'k' : String(n); }
  function time(ms) { var d = new Date(ms); return d.toTimeString().slice(0, 8); }
  function dur(ms) { return ms < 1000 ? ms + ' ms' : ms < 60000 ? (ms / 1000).toFixed(1) + ' s' : Math.round(ms / 60000) + ' min'; }
  function toast(text) { var t = document.getElementById('toast'); t.textContent = text; t.className = 'show'; clearTimeout(toast.h); toast.h = setTimeout(function () { t.className = ''; }, 2500); }
  function setStatus(ok, text) { var s = document.getElementById('status'); s.className = ok ? 'live' : 'down'; document.getElementById('status-text').textContent = text; }

  function actionButton(kind, id, paused) {
    var action = paused ? 'resume' : 'pause';
    var key = kind + '/' + id;
    return '<button class="act ' + action + '" data-kind="' + kind + '" data-id="' + esc(id) + '" data-action="' + action + '"' + (busy[key] ? ' disabled' : '') + '>' + action + '</button>';
  }

  function renderTenants(s) {
    var rows = s.tenants.map(function (t, i) {
      return '<tr class="' + (i === 0 && t.perSecond > 0 ? 'top' : '') + '" data-tenant="' + esc(t.tenant) + '"><td class="name">' + esc(t.tenant) + '</td><td>' + t.perSecond + '</td><td>' + fmt(t.admitted) +
        '</td><td class="' + (t.refused ? 'num-bad' : '') + '">' + fmt(t.refused) + '</td><td class="' + (t.warned ? 'num-warn' : '') + '">' + fmt(t.warned) + '</td><td>' + fmt(t.queued) +
        '</td><td>' + (t.paused ? '<span class="pill paused">paused</span>' : '<span class="pill">active</span>') + '</td><td>' + actionButton('tenants', t.tenant, t.paused) + '</td></tr>';
    });
    document.querySelector('#tenants tbody').innerHTML = rows.join('') || '<tr><td colspan="8" class="empty">no traffic in the last ' + s.burstWindowMs / 1000 + ' s</td></tr>';
    document.getElementById('window-s').textContent = String(s.burstWindowMs / 1000);
  }

  function renderAccounts(s) {
    var rows = s.accounts.map(function (a) {
      return '<tr data-account="' + esc(a.account) + '"><td class="name">' + esc(a.account) + (a.paused ? ' <span class="pill paused">paused</span>' : '') + '</td><td>' + esc(a.tenant) + '</td><td>' + esc(a.tier) + '</td><td>' + a.perSecond + '</td><td>' + fmt(a.admitted) + '</td><td class="' + (a.refused ? 'num-bad' : '') + '">' + fmt(a.refused) + '</td><td>' + actionButton('accounts', a.account, a.paused) + '</td></tr>';
    });
    document.querySelector('#accounts tbody').innerHTML = rows.join('') || '<tr><td colspan="7" class="empty">no traffic</td></tr>';
  }

  function path(values, max, w, h, area) {
    var n = values.length; if (n === 0) return '';
    var dx = n > 1 ? w / (n - 1) : w;
    var d = '';
    for (var i = 0; i < n; i++) { d += (i ? 'L' : 'M') + (i * dx).toFixed(1) + ' ' + (h - (values[i] / max) * (h - 4)).toFixed(1); }
    if (area) d += 'L' + ((n - 1) * dx).toFixed(1) + ' ' + h + 'L0 ' + h + 'Z';
    return d;
  }
  function sum(a) { var t = 0; for (var i = 0; i < a.length; i++) t += a[i]; return t; }

  function renderHistory(s) {
    var W = 600, H = 90, out = '';
    var tiers = Object.keys(s.history.tiers);
    // From the first activity (at least the last minute) up to five minutes back.
    var n = 0, first = -1;
    tiers.forEach(function (tier) {
      var h = s.history.tiers[tier]; n = h.admitted.length;
      ['admitted', 'refused', 'completed', 'absorbed', 'expired', 'failed'].forEach(function (k) { var i = h[k].findIndex(function (v) { return v > 0; }); if (i >= 0 && (first < 0 || i < first)) first = i; });
    });
    var from = Math.max(0, Math.min(first < 0 ? n : first - 5, n - 60));
    document.getElementById('history-span').textContent = dur((n - from) * s.history.stepMs);
    tiers.forEach(function (tier) {
      var all = s.history.tiers[tier], h = {};
      Object.keys(all).forEach(function (k) { h[k] = all[k].slice(from); });
      var max = 1;
      ['absorbed', 'refused', 'completed'].forEach(function (k) { h[k].forEach(function (v) { if (v > max) max = v; }); });
      var absorbed = sum(h.absorbed), refused = sum(h.refused), completed = sum(h.completed);
      var ratio = absorbed + refused > 0 ? Math.round(100 * absorbed / (absorbed + refused)) + '% absorbed rather than refused' : '';
      out += '<div class="tier" data-tier="' + esc(tier) + '"><div class="tier-head"><b>' + esc(tier) + '</b><span>absorbed ' + fmt(absorbed) + ' &middot; refused ' + fmt(refused) + ' &middot; completed ' + fmt(completed) + (ratio ? ' &middot; ' + ratio : '') + ' &middot; peak ' + max + '/s</span></div>' +
        '<svg viewBox="0 0 ' + W + ' ' + H + '" preserveAspectRatio="none" style="height:' + H + 'px;background:#fafbfc;border:1px solid var(--line);border-radius:4px">' +
        '<path d="' + path(h.refused, max, W, H, true) + '" fill="rgba(214,69,69,.28)" stroke="#d64545" stroke-width="1.2"/>' +
        '<path d="' + path(h.absorbed, max, W, H, true) + '" fill="rgba(31,157,97,.30)" stroke="#1f9d61" stroke-width="1.2"/>' +
        '<path d="' + path(h.completed, max, W, H, false) + '" fill="none" stroke="#3d6fd9" stroke-width="1.4"/>' +
        '</svg></div>';
    });
    document.getElementById('history').innerHTML = out || '<div class="empty">no tiers</div>';
  }

  function renderGpu(s) {
    var out = '';
    s.gpu.forEach(function (g) {
      out += '<div style="margin-bottom:8px"><div class="tier-head"><b>' + esc(g.model) + '</b><span>' + g.capacity + ' slots' + (g.paceFactor !== 1 ? ' &middot; pace x' + g.paceFactor.toFixed(2) : '') + '</span></div>';
      g.tiers.forEach(function (t) {
        var cap = Math.max(1, g.capacity);
        var used = Math.min(100, 100 * t.inUse / cap), res = Math.min(100, 100 * t.reserved / cap);
        var over = t.inUse > t.reserved;
        out += '<div class="bar-row" data-model="' + esc(g.model) + '" data-tier="' + esc(t.tier) + '"><span class="label">' + esc(t.tier) + '</span>' +
          '<svg viewBox="0 0 100 12" preserveAspectRatio="none" style="height:12px"><rect x="0" y="0" width="100" height="12" fill="#eef0f4"/><rect x="0" y="1" width="' + used.toFixed(2) + '" height="10" fill="' + (over ? '#d98a1c' : '#3d6fd9') + '"/>' +
          '<rect x="' + Math.max(0, res - 0.6).toFixed(2) + '" y="0" width="1.2" height="12" fill="#1d2330"/></svg>' +
          '<span class="val">' + t.inUse + ' / ' + t.reserved + ' reserved</span></div>';
      });
      out += '</div>';
    });
    document.getElementById('gpu').innerHTML = out || '<div class="empty">no models</div>';
  }

  function renderTopics(s) {
    var max = 1;
    s.liteTopics.forEach(function (t) { if (t.depth > max) max = t.depth; });
    var out = s.liteTopics.map(function (t) {
      return '<div class="bar-row" data-lite-topic="' + esc(t.liteTopic) + '"><span class="label" title="' + esc(t.liteTopic) + '">' + esc(t.tier + ' / ' + t.tenant + ' / ' + t.model) + '</span>' +
        '<svg viewBox="0 0 100 12" preserveAspectRatio="none" style="height:12px"><rect x="0" y="0" width="100" height="12" fill="#eef0f4"/><rect x="0" y="1" width="' + (100 * t.depth / max).toFixed(2) + '" height="10" fill="#6b59d3"/></svg>' +
        '<span class="val">' + fmt(t.depth) + ' waiting</span></div>';
    });
    document.getElementById('topics').innerHTML = out.join('') || '<div class="empty">every LiteTopic is empty</div>';
  }

  function renderLog(s) {
    var items = [];
    s.alerts.forEach(function (a) { items.push({ at: a.at, kind: 'alert', text: a.alert + ': ' + a.message + (a.repeats ? ' (+' + a.repeats + ' more)' : '') }); });
    s.warnings.forEach(function (w) { items.push({ at: w.at, kind: 'warning', text: w.account + ' (' + w.tenant + ', ' + w.tier + ', ' + w.model + '): ' + w.message + (w.count > 1 ? ' (' + w.count + ' warnings)' : '') }); });
    items.sort(function (a, b) { return b.at - a.at; });
    document.getElementById('warnings').innerHTML = items.slice(0, 40).map(function (i) {
      return '<li><time>' + time(i.at) + '</time><span class="k ' + i.kind + '">' + i.kind + '</span>' + esc(i.text) + '</li>';
    }).join('') || '<li class="empty">nothing to report</li>';
    document.getElementById('alerts').innerHTML = s.activeAlerts.map(function (a) {
      return '<div class="banner" data-alert="' + esc(a.alert) + '"><b>' + esc(a.alert) + '</b>' + esc(a.message) + '</div>';
    }).join('');
  }

  function renderBookings(s) {
    var rows = s.bookings.map(function (b) {
      var extra = Object.keys(b.extra).filter(function (k) { return b.extra[k]; }).map(function (k) { return '+' + fmt(b.extra[k]) + ' ' + k; }).join(', ');
      var when = b.active ? 'until ' + time(b.endsAt) + ' (' + dur(b.endsAt - s.now) + ' left)' : 'from ' + time(b.startsAt) + ' (in ' + dur(b.startsAt - s.now) + ') to ' + time(b.endsAt);
      return '<tr><td class="name">' + esc(b.tenant) + '</td><td>' + esc(b.model || 'all models') + '</td><td>' + esc(extra || '-') + '</td><td>' + (b.active ? '<span class="pill active">active</span> ' : '<span class="pill">booked</span> ') + esc(when) + '</td></tr>';
    });
    document.getElementById('bookings').innerHTML = rows.length ? '<table><thead><tr><th>tenant</th><th>model</th><th>extra</th><th>window</th></tr></thead><tbody>' + rows.join('') + '</tbody></table>' : '<div class="empty">no bookings</div>';
  }

  function renderPaused(s) {
    var rows = s.paused.tenants.map(function (t) { return '<tr data-paused-tenant="' + esc(t) + '"><td class="name">' + esc(t) + '</td><td>tenant</td><td>' + actionButton('tenants', t, true) + '</td></tr>'; })
      .concat(s.paused.accounts.map(function (a) { return '<tr data-paused-account="' + esc(a) + '"><td class="name">' + esc(a) + '</td><td>account</td><td>' + actionButton('accounts', a, true) + '</td></tr>'; }));
    document.getElementById('paused').innerHTML = rows.length ? '<table><tbody>' + rows.join('') + '</tbody></table>' : '<div class="empty">nothing is paused</div>';
  }

  function renderInstances(s) {
    var rows = (s.instances || []).map(function (i) {
      return '<tr data-instance="' + esc(i.instance) + '"><td class="name">' + esc(i.instance) + '</td><td>' + esc(i.role) + '</td><td>' +
        (i.policyAgeMs === undefined ? 'n/a' : (i.policyAgeMs / 1000).toFixed(1) + ' s ago') + '</td><td>' + esc(i.policyDigest || '') + '</td></tr>';
    });
    document.getElementById('instances').innerHTML = rows.length
      ? '<table><thead><tr><th>instance</th><th>role</th><th>policy read</th><th>policy</th></tr></thead><tbody>' + rows.join('') + '</tbody></table>'
      : '<div class="empty">this view is one process only</div>';
  }

  function render(s) {
    state = s;
    renderTenants(s); renderAccounts(s); renderHistory(s); renderGpu(s); renderTopics(s); renderLog(s); renderBookings(s); renderPaused(s); renderInstances(s);
  }

  var inFlight = false;
  function poll() {
    if (inFlight) return;
    inFlight = true;
    fetch(CONFIG.stateUrl, { headers: authHeaders(), cache: 'no-store' }).then(function (r) {
      if (r.status === 401) { setStatus(false, 'admin key needed'); return null; }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (s) {
      if (!s) return;
      render(s);
      setStatus(true, 'live, updated ' + time(s.now));
    }).catch(function (e) { setStatus(false, 'offline (' + e.message + ')'); })
      .then(function () { inFlight = false; });
  }

  document.addEventListener('click', function (e) {
    var b = e.target.closest && e.target.closest('button.act');
    if (!b) return;
    var kind = b.getAttribute('data-kind'), id = b.getAttribute('data-id'), action = b.getAttribute('data-action');
    if (!adminKey()) { toast('enter the admin key first'); document.getElementById('admin-key').focus(); return; }
    busy[kind + '/' + id] = true; b.disabled = true;
    fetch(CONFIG.adminPath + '/' + kind + '/' + encodeURIComponent(id) + '/' + action, { method: 'POST', headers: authHeaders() }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) {
        if (!r.ok) throw new Error((body && body.error && body.error.message) || 'HTTP ' + r.status);
        toast((kind === 'tenants' ? 'tenant ' : 'account ') + id + (action === 'pause' ? ' paused' : ' resumed'));
      });
    }).catch(function (err) { toast(action + ' failed: ' + err.message); })
      .then(function () { delete busy[kind + '/' + id]; poll(); });
  });

  poll();
  setInterval(poll, 1000);
})();
</script>
</body>
</html>
`;
