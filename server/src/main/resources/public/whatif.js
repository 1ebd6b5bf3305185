// gpupool dashboard, what-if card: GET /api/v1/history/whatif replays the pool's finished jobs of a window under the
// policies asked for, on the server's nodes; the first row is what really happened ('recorded (POLICY)').
// Uses app.js's api, esc and fmtDur. Runs only when asked (a comparison takes the server a moment).
'use strict';

async function runWhatIf() {
  const since = $('whatif-range').value;
  const policies = $('whatif-policies').value.split(',').map((p) => p.trim()).filter((p) => p).join(',');
  $('whatif-note').textContent = 'replaying…';
  $('whatif-run').disabled = true;
  try {
    const r = await api('GET', `/api/v1/history/whatif?since=${encodeURIComponent(since)}&policy=${encodeURIComponent(policies)}`);
    const left = r.leftOut;
    $('whatif-note').textContent = `${r.jobs} finished jobs submitted ${new Date(r.since).toLocaleString()} – ${new Date(r.until).toLocaleString()}`
      + (r.tenant ? ` (tenant ${r.tenant} only)` : '') + `; left out: ${left.unfinished} still active, ${left.neverStarted} never started.`
      + ' Times are replayed to the millisecond; the service decides a few ms after each event (docs/architecture.md, "History as a trace").';
    const pct = (v) => (100 * v).toFixed(1) + '%';
    const s = (v) => fmtDur(v * 1000);
    $('whatif').querySelector('tbody').innerHTML = r.results.map((x, i) =>
      `<tr${i === 0 ? ' class="total"' : ''}><td>${i === 0 ? '<b>' + esc(x.policy) + '</b>' : esc(x.policy)}</td><td>${x.jobs}</td>`
      + `<td>${pct(x.utilization)}</td><td>${s(x.avg_wait_s)}</td><td>${s(x.p95_wait_s)}</td><td>${s(x.max_wait_s)}</td>`
      + `<td>${s(x.avg_jct_s)}</td><td>${s(x.p95_jct_s)}</td><td>${x.avg_slowdown.toFixed(2)}</td><td>${x.jain_fairness.toFixed(3)}</td></tr>`).join('');
  } catch (e) {
    $('whatif-note').textContent = 'cannot compare: ' + e.message;
    $('whatif').querySelector('tbody').innerHTML = '';
  } finally {
    $('whatif-run').disabled = false;
  }
}

$('whatif-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  runWhatIf();
});
