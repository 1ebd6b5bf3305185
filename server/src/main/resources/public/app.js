// gpupool dashboard: plain JS, no dependencies. Reads /api/v1/pool once, then follows the server-sent
// events of /api/v1/events (read with fetch, so the token travels in the Authorization header).
'use strict';

const state = { token: null, who: null, snapshot: null, history: [], selected: null, tenants: [] };
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

async function api(method, path, body) {
  const opts = { method, headers: { Authorization: 'Bearer ' + state.token } };
  if (body !== undefined) { opts.headers['Content-Type'] = 'application/json'; opts.body = JSON.stringify(body); }
  const r = await fetch(path, opts);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { message: text }; }
  if (!r.ok) { const err = new Error((data && data.message) || r.statusText); err.status = r.status; throw err; }
  return data;
}

// ---- sign-in ----------------------------------------------------------------------------------
function takeTokenFromUrl() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    localStorage.setItem('gpupool.token', decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname);
  }
}

async function signIn() {
  state.token = localStorage.getItem('gpupool.token');
  if (!state.token) { showLogin(''); return; }
  try {
    state.who = await api('GET', '/api/v1/whoami');
  } catch (e) {
    showLogin(e.status === 401 ? 'That token is not valid.' : e.message);
    return;
  }
  $('login').classList.add('hidden');
  $('app').classList.remove('hidden');
  $('whoami').textContent = state.who.role + (state.who.tenant ? ' of ' + state.who.tenant : '');
  await loadTenants();
  const [snap, hist] = await Promise.all([api('GET', '/api/v1/pool'), api('GET', '/api/v1/pool/history')]);
  state.history = hist.points;
  render(snap);
  follow();
}

function showLogin(msg) {
  $('app').classList.add('hidden');
  $('login').classList.remove('hidden');
  $('login-error').textContent = msg;
}

$('token-save').addEventListener('click', () => {
  localStorage.setItem('gpupool.token', $('token-input').value.trim());
  signIn();
});

async function loadTenants() {
  const t = await api('GET', '/api/v1/tenants');
  state.tenants = t.tenants.map((x) => x.name);
  const sel = $('f-tenant');
  if (state.who.role === 'member') { $('f-tenant-label').classList.add('hidden'); return; }
  sel.innerHTML = state.tenants.map((n) => `<option>${esc(n)}</option>`).join('');
}

// ---- live stream --------------------------------------------------------------------------------
async function follow() {
  for (;;) {
    try {
      const r = await fetch('/api/v1/events', { headers: { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' } });
      if (!r.ok) throw new Error('events: ' + r.status);
      setLive(true);
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          handleEvent(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (e) { /* reconnect below */ }
    setLive(false);
    await new Promise((res) => setTimeout(res, 2000));
  }
}

function setLive(on) {
  const el = $('live');
  el.textContent = on ? 'live' : 'offline';
  el.className = 'live ' + (on ? 'on' : 'off');
}

function handleEvent(block) {
  let type = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (!data.length) return;
  const payload = JSON.parse(data.join('\n'));
  if (type === 'pool') {
    const last = state.history[state.history.length - 1];
    if (!last || payload.atMs - last.atMs >= 2000) {
      state.history.push({ atMs: payload.atMs, allocation: payload.totals.allocation, utilization: payload.totals.utilization,
        pending: payload.pendingCount, running: payload.runningCount });
      if (state.history.length > 900) state.history.shift();
    }
    render(payload);
  } else if (type === 'job') {
    addEvent(payload);
    if (state.selected === payload.jobId) showJob(payload.jobId);
  }
}

// ---- rendering ----------------------------------------------------------------------------------
const tenantColors = {};
const palette = ['#2357b5', '#2e9e5b', '#8e44ad', '#d9822b', '#16a2b8', '#c0392b', '#7f8c8d', '#b8860b'];
function colorOf(tenant) {
  if (!(tenant in tenantColors)) tenantColors[tenant] = palette[Object.keys(tenantColors).length % palette.length];
  return tenantColors[tenant];
}

function heat(frac) { // white -> blue by allocated compute
  const l = 97 - Math.round(frac * 22);
  return `hsl(214, 70%, ${l}%)`;
}

function fmtDur(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return s + 's';
  if (s < 5400) return Math.round(s / 60) + 'm';
  return (s / 3600).toFixed(1) + 'h';
}

function jobLink(id) { return id ? `<a class="job" data-job="${esc(id)}">${esc(id)}</a>` : '<span class="muted">other tenant</span>'; }

/** What limits a node's isolation (docs/security.md): jobs under its agent's account, accounts it lacks, no cgroups. */
function isolationBadges(n) {
  const b = [];
  if (n.accounts && !n.accounts.switches) b.push(`<span class="badge warn" title="${esc(n.accounts.reason || '')}">shared account</span>`);
  for (const a of (n.accounts && n.accounts.missing) || []) b.push(`<span class="badge warn" title="jobs of this account wait for another node">no account ${esc(a)}</span>`);
  if (n.isolation && n.isolation.mode === 'none') b.push(`<span class="badge warn" title="${esc(n.isolation.reason || '')}">unconfined</span>`);
  return b.length ? ' ' + b.join(' ') : '';
}

function render(s) {
  state.snapshot = s;
  const t = s.totals;
  $('summary').textContent = `policy ${s.policy} · ${t.nodes} nodes · ${t.gpusAllocated.toFixed(2)} of ${t.gpus} GPUs allocated (${Math.round(t.allocation * 100)}%)`
    + (t.utilization == null ? '' : ` · utilization ${Math.round(t.utilization * 100)}%`) + ` · ${s.runningCount} running · ${s.pendingCount} queued`;
  $('nodes').innerHTML = s.nodes.map((n) => `
    <div class="node${n.cordoned || n.state === 'lost' ? ' cordoned' : ''}" data-node="${esc(n.name)}" data-state="${esc(n.state)}">
      <h3><span>${esc(n.name)}</span><span><span class="badge">${esc(n.model)}</span>${n.cordoned ? ' <span class="badge warn">cordoned</span>' : ''}${n.state === 'lost' || n.state === 'waiting' ? ` <span class="badge warn" title="${n.state === 'lost' ? 'its agent stopped reporting' : 'waiting for its agent'}">${esc(n.state)}</span>` : ''}${isolationBadges(n)}</span></h3>
      <div class="gpus">${n.gpus.map((g) => gpuTile(g)).join('')}</div>
    </div>`).join('') || '<p class="muted">no nodes yet: start an agent, or the server with --cluster or --demo</p>';
  const maxWeight = s.tenants.reduce((a, x) => Math.max(a, x.entitlement, x.share), 0.01);
  $('tenants').querySelector('tbody').innerHTML = s.tenants.map((x) => `
    <tr><td><span style="color:${colorOf(x.name)}">■</span> ${esc(x.name)}</td><td>${x.weight}</td>
      <td><div class="sharebar" title="share ${(x.share * 100).toFixed(1)}% vs entitlement ${(x.entitlement * 100).toFixed(1)}%">
        <i style="width:${(x.share / maxWeight) * 100}%;background:${colorOf(x.name)}"></i><b style="left:${(x.entitlement / maxWeight) * 100}%"></b></div>
        ${(x.share * 100).toFixed(0)}% / ${(x.entitlement * 100).toFixed(0)}%</td>
      <td>${x.gpusHeld.toFixed(2)}</td><td>${x.limitGpus > 0 ? x.limitGpus : '–'}</td><td>${x.running}</td><td>${x.pending}</td></tr>`).join('');
  $('queue-count').textContent = `${s.pendingCount} queued` + (s.queue.length < s.pendingCount ? `, first ${s.queue.length} shown` : '');
  $('queue').querySelector('tbody').innerHTML = s.queue.map((j) => `
    <tr><td>${jobLink(j.id)}${j.array ? ` <small>[${j.array.pending} pending, ${j.array.running} running${j.array.cap ? ', %' + j.array.cap : ''}]</small>` : ''}</td><td>${esc(j.tenant)}</td><td>${esc(j.name)}</td>
      <td>${j.numGpus}${j.gpuMilli < 1000 ? ' × ' + j.gpuMilli / 10 + '%' : ''}${j.gpuMemMib ? ' · ' + Math.round(j.gpuMemMib / 1024) + ' GiB' : ''}</td>
      <td>${j.priority}</td><td>${fmtDur(s.atMs - j.submittedMs)}</td><td class="reason">${esc(j.waitReason)}</td></tr>`).join('')
    || '<tr><td colspan="7" class="muted">the queue is empty</td></tr>';
  $('reservations').querySelector('tbody').innerHTML = (s.reservations || []).map((r) => `
    <tr><td>${esc(r.name)}</td><td>${esc(r.tenant)}</td><td>${r.gpus}</td><td>${esc(r.model || r.nodes.join(', '))}</td>
      <td>${new Date(r.startMs).toLocaleString()}</td><td>${new Date(r.endMs).toLocaleString()}</td>
      <td>${r.startMs <= s.atMs ? 'in its window' : 'starts in ' + fmtDur(r.startMs - s.atMs)}</td></tr>`).join('')
    || '<tr><td colspan="7" class="muted">no reservations</td></tr>';
  drawChart();
}

function gpuTile(g) {
  const frac = g.usedMilli / 1000;
  const tel = g.telemetry ? `${Math.round(g.telemetry.utilPercent)}% · ${Math.round(g.telemetry.tempC)}°C · ${Math.round(g.telemetry.powerWatts)}W` : '';
  const tasks = g.tasks.map((t) => `
    <div class="task" ${t.jobId ? `data-job="${esc(t.jobId)}"` : ''} title="${esc(t.jobId || 'another tenant')} (${esc(t.tenant)}): ${t.milli / 10}% compute, ${Math.round(t.memoryMib / 1024)} GiB">
      <div class="lbl">${t.jobId ? esc(t.jobId) : '·'} <span class="muted">${esc(t.tenant)}</span></div>
      <div class="bar"><i style="width:${t.milli / 10}%;background:${colorOf(t.tenant)}"></i></div>
      <div class="bar"><i style="width:${Math.min(100, (t.memoryMib / g.memoryMib) * 100)}%;background:${colorOf(t.tenant)};opacity:.55"></i></div>
    </div>`).join('');
  return `<div class="gpu" style="background:${heat(frac)}" data-gpu="${g.index}" data-used="${g.usedMilli}">
    <div class="idx"><span>GPU ${g.index}</span><span>${Math.round(frac * 100)}%</span></div>
    <div class="tel">${tel}</div>${tasks}</div>`;
}

function drawChart() {
  const c = $('chart');
  const ctx = c.getContext('2d');
  const W = c.width, H = c.height, pad = 28;
  ctx.clearRect(0, 0, W, H);
  const pts = state.history;
  ctx.strokeStyle = '#dde2ea';
  ctx.beginPath(); ctx.moveTo(pad, H - pad); ctx.lineTo(W - pad, H - pad); ctx.stroke();
  ctx.fillStyle = '#6b7380'; ctx.font = '10px sans-serif';
  ctx.fillText('100%', 0, pad); ctx.fillText('0', 14, H - pad);
  if (pts.length < 2) return;
  const t0 = pts[0].atMs, t1 = pts[pts.length - 1].atMs;
  const maxQ = Math.max(5, ...pts.map((p) => p.pending));
  ctx.fillText(String(maxQ), W - pad + 4, pad);
  const x = (t) => pad + ((t - t0) / Math.max(1, t1 - t0)) * (W - 2 * pad);
  const line = (color, f) => {
    ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
    let started = false;
    for (const p of pts) {
      const v = f(p);
      if (v == null) continue;
      const y = H - pad - v * (H - 2 * pad);
      if (!started) { ctx.moveTo(x(p.atMs), y); started = true; } else ctx.lineTo(x(p.atMs), y);
    }
    ctx.stroke();
  };
  line('#2357b5', (p) => p.allocation);
  line('#2e9e5b', (p) => p.utilization);
  line('#d9822b', (p) => p.pending / maxQ);
}

function addEvent(ev) {
  const li = document.createElement('li');
  li.innerHTML = `${new Date(ev.atMs).toLocaleTimeString()} ${jobLink(ev.jobId)} <span class="state ${esc(ev.state)}">${esc(ev.type)}</span> ${esc(ev.tenant)} ${esc(ev.detail || '')}`;
  const ul = $('events');
  ul.insertBefore(li, ul.firstChild);
  while (ul.children.length > 200) ul.removeChild(ul.lastChild);
}

// ---- job detail, submit, cancel -----------------------------------------------------------------
document.addEventListener('click', (e) => {
  const el = e.target.closest('[data-job]');
  if (el) showJob(el.dataset.job);
});

async function showJob(id) {
  state.selected = id;
  const box = $('job-detail');
  try {
    const [j, ev, logs] = await Promise.all([api('GET', '/api/v1/jobs/' + encodeURIComponent(id)),
      api('GET', `/api/v1/jobs/${encodeURIComponent(id)}/events`), api('GET', `/api/v1/jobs/${encodeURIComponent(id)}/logs?offset=0&limit=65536`)]);
    const where = j.allocation.map((g) => `${g.node} GPU ${g.gpu}${g.exclusive ? '' : ` (${g.milli / 10}%, ${g.memoryMib} MiB)`}`).join('; ');
    box.innerHTML = `
      <dl><dt>job</dt><dd id="detail-id">${esc(j.id)} — ${esc(j.name)}</dd>
        <dt>state</dt><dd id="detail-state" class="state ${esc(j.state)}">${esc(j.state)}</dd>
        <dt>tenant</dt><dd>${esc(j.tenant)}</dd>
        <dt>asks</dt><dd>${j.numGpus} GPU${j.numGpus > 1 ? 's' : ''}${j.gpuMilli < 1000 ? ', ' + j.gpuMilli / 10 + '% compute' : ''}${j.gpuMemMib ? ', ' + j.gpuMemMib + ' MiB' : ''}${j.gpuTypes.length ? ' on ' + esc(j.gpuTypes.join('|')) : ''}</dd>
        <dt>command</dt><dd><code>${esc(j.command.join(' '))}</code></dd>
        ${j.timeLimit ? `<dt>time limit</dt><dd id="detail-time-limit">${esc(j.timeLimit)}</dd>` : ''}
        ${j.waitReason ? `<dt>waits</dt><dd class="reason">${esc(j.waitReason)}</dd>` : ''}
        ${where ? `<dt>runs on</dt><dd>${esc(where)}</dd>` : ''}
        ${j.message ? `<dt>message</dt><dd>${esc(j.message)}</dd>` : ''}
      </dl>
      ${(j.state === 'PENDING' || j.state === 'RUNNING') ? '<button id="detail-cancel" class="danger">Cancel job</button>' : ''}
      <pre>${ev.events.map((e) => `${new Date(e.atMs).toLocaleTimeString()} ${e.type} ${e.detail}`).map(esc).join('\n')}</pre>
      <pre id="detail-logs">${esc(logs.text) || 'no output yet'}</pre>`;
    const btn = $('detail-cancel');
    if (btn) btn.addEventListener('click', async () => {
      btn.disabled = true;
      try { await api('DELETE', '/api/v1/jobs/' + encodeURIComponent(id)); } catch (err) { alert(err.message); }
      showJob(id);
    });
  } catch (e) {
    box.innerHTML = `<p class="error">${esc(e.message)}</p>`;
  }
}

$('submit-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const body = {
    name: $('f-name').value, numGpus: Number($('f-gpus').value), gpuMilli: Number($('f-milli').value),
    gpuMemMib: Number($('f-mem').value), command: $('f-command').value.trim().split(/\s+/),
  };
  if ($('f-time').value.trim()) body.timeLimit = $('f-time').value.trim();
  if (state.who.role === 'admin') body.tenant = $('f-tenant').value;
  const out = $('submit-result');
  try {
    const j = await api('POST', '/api/v1/jobs', body);
    out.innerHTML = `submitted ${jobLink(j.id)}`;
    out.dataset.job = j.id;
    showJob(j.id);
  } catch (err) {
    out.innerHTML = `<span class="error">${esc(err.message)}</span>`;
  }
});

// which replica serves this page (high availability): its role and URL, and the active's when this one is a standby
async function showReplica() {
  try {
    const h = await (await fetch('/healthz')).json();
    $('replica').textContent = h.role === 'standby' ? `standby ${h.self} (active: ${h.active || 'being chosen'})` : `${h.role} replica ${h.self}`;
    $('replica').dataset.role = h.role;
  } catch (e) {
    $('replica').textContent = 'replica unreachable';
  }
}

takeTokenFromUrl();
showReplica();
setInterval(showReplica, 5000);
signIn();
