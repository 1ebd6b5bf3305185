// gpupool dashboard, usage card: GET /api/v1/usage by tenant (table: allocated vs used, energy, jobs, waits) and,
// per tenant, by hour or day (chart: allocated GPU-hours stacked by tenant, the GPU-hours used drawn over them).
// Uses app.js's state, api, esc, colorOf and fmtDur; refreshes every 30 s and when the range changes.
'use strict';

const usageRanges = { '24h': { since: '24h', by: 'hour' }, '7d': { since: '7d', by: 'day' }, '30d': { since: '30d', by: 'day' } };

// four significant digits, without exponent for what a pool accrues (a second of one GPU is 0.0002778 GPU-h)
const sig4 = (v) => String(Number(v.toPrecision(4)));

// every bucket of the window, as the API names them: 2026-12-04T05:00Z (hour) or 2026-12-04 (day)
function usageBuckets(since, until, by) {
  const step = by === 'hour' ? 3600000 : 86400000;
  const out = [];
  for (let t = Math.floor(Date.parse(since) / step) * step; t < Date.parse(until); t += step) {
    const iso = new Date(t).toISOString();
    out.push(by === 'hour' ? iso.slice(0, 16) + 'Z' : iso.slice(0, 10));
  }
  return out;
}

async function refreshUsage() {
  if (!state.who) return false;
  const range = usageRanges[$('usage-range').value];
  const all = await api('GET', `/api/v1/usage?since=${range.since}`);
  const series = await Promise.all(all.groups.map((g) =>
    api('GET', `/api/v1/usage?since=${range.since}&until=${encodeURIComponent(all.until)}&by=${range.by}&tenant=${encodeURIComponent(g.key)}`)));
  $('usage-window').textContent = `${new Date(all.since).toLocaleString()} – ${new Date(all.until).toLocaleString()}` + (all.tenant ? ` · tenant ${all.tenant}` : '');
  renderUsageTable(all);
  drawUsage(all, series, usageBuckets(all.since, all.until, range.by));
  return true;
}

function renderUsageTable(all) {
  const row = (g, total) => {
    const jobs = Object.entries(g.jobs).map(([s, n]) => `${n} ${s.toLowerCase()}`).join(', ') || '–';
    const pct = g.gpuHoursAllocated > 0 ? g.gpuHoursUsed / g.gpuHoursAllocated : 0;
    return `<tr data-tenant="${esc(g.key)}"${total ? ' class="total"' : ''}><td>${total ? '<b>total</b>' : esc(g.key)}</td>`
      + `<td class="alloc">${sig4(g.gpuHoursAllocated)}</td><td class="used">${sig4(g.gpuHoursUsed)}</td>`
      + `<td><div class="sharebar" title="${(100 * pct).toFixed(1)}% of the allocated GPU time was used">`
      + `<i style="width:${(100 * Math.min(1, pct)).toFixed(1)}%;background:${total ? '#6b7380' : colorOf(g.key)}"></i></div></td>`
      + `<td>${g.gpuMemoryGibHours.toFixed(1)}</td><td class="kwh">${sig4(g.energyKwh)}</td><td>${esc(jobs)}</td>`
      + `<td>${g.waitSeconds.count ? fmtDur(g.waitSeconds.p90 * 1000) : '–'}</td></tr>`;
  };
  $('usage').querySelector('tbody').innerHTML = all.groups.map((g) => row(g, false)).join('') + row(all.total, true);
}

function drawUsage(all, series, buckets) {
  const c = $('usage-chart');
  const ctx = c.getContext('2d');
  const W = c.width, H = c.height, pad = 30;
  ctx.clearRect(0, 0, W, H);
  const alloc = buckets.map(() => []); // per bucket: [tenant, GPU-hours allocated]
  const used = buckets.map(() => 0);
  series.forEach((s, i) => {
    const tenant = all.groups[i].key;
    for (const g of s.groups) {
      const b = buckets.indexOf(g.key);
      if (b < 0) continue;
      alloc[b].push([tenant, g.gpuHoursAllocated]);
      used[b] += g.gpuHoursUsed;
    }
  });
  const totals = alloc.map((a) => a.reduce((x, [, v]) => x + v, 0));
  const max = Math.max(1e-9, ...totals);
  c.dataset.buckets = String(buckets.length);
  c.dataset.allocated = totals.reduce((x, v) => x + v, 0).toFixed(6);
  ctx.fillStyle = '#6b7380'; ctx.font = '10px sans-serif';
  ctx.fillText(sig4(max) + ' GPU-h', 0, pad - 8);
  ctx.strokeStyle = '#dde2ea';
  ctx.beginPath(); ctx.moveTo(pad, H - pad); ctx.lineTo(W - 4, H - pad); ctx.stroke();
  const bw = (W - pad - 4) / Math.max(1, buckets.length);
  const y = (v) => (v / max) * (H - 2 * pad);
  buckets.forEach((key, b) => {
    const x = pad + b * bw;
    let top = H - pad;
    for (const [tenant, v] of alloc[b]) {
      const h = y(v);
      ctx.fillStyle = colorOf(tenant);
      ctx.fillRect(x + 1, top - h, Math.max(1, bw - 2), h);
      top -= h;
    }
    if (used[b] > 0) { // used: a dark bar in the middle of the allocated one
      ctx.fillStyle = 'rgba(29, 36, 48, .55)';
      ctx.fillRect(x + bw * 0.35, H - pad - y(used[b]), Math.max(1, bw * 0.3), y(used[b]));
    }
    if (buckets.length <= 31 || b % Math.ceil(buckets.length / 24) === 0) {
      ctx.fillStyle = '#6b7380';
      ctx.fillText(key.length > 10 ? key.slice(11, 16) : key.slice(5), x + 1, H - pad + 12);
    }
  });
  $('usage-legend').innerHTML = all.groups.map((g) => `<span class="k" style="background:${colorOf(g.key)}"></span>${esc(g.key)}`).join(' ')
    + ' <span class="k used"></span> GPU-hours used (telemetry)';
}

$('usage-range').addEventListener('change', () => refreshUsage().catch(() => {}));
(function startUsage() {
  refreshUsage().then((ok) => setTimeout(ok ? () => setInterval(() => refreshUsage().catch(() => {}), 30000) : startUsage, ok ? 0 : 500),
    () => setTimeout(startUsage, 2000));
})();
