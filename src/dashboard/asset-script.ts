// The dashboard's one client script, served at /dashboard/app.js. It never builds HTML
// from data: it swaps in fragments the server rendered (escaped there) and writes the
// viewer's local times with textContent.
export const CLIENT_SCRIPT = `'use strict';
(function () {
  var REFRESH_MS = 2000;
  var SIX_DAYS_MS = 6 * 86400000;
  var parts = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  var clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  // The viewer's own form of an instant, as the server writes the campaign's:
  // "Thu 23:59", or "Mon 7 Dec 09:00" beyond six days.
  function said(d) {
    var p = {};
    parts.formatToParts(d).forEach(function (x) { p[x.type] = x.value; });
    var time = p.hour + ':' + p.minute;
    return d.getTime() - Date.now() > SIX_DAYS_MS ? p.weekday + ' ' + p.day + ' ' + p.month + ' ' + time : p.weekday + ' ' + time;
  }
  // After each campaign time: " · 05:59 yours" (the weekday too when the viewer's differs);
  // nothing when the viewer's clock reads the same.
  function localTimes(root) {
    var times = root.querySelectorAll('time[data-local]');
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      var d = new Date(t.getAttribute('datetime'));
      if (isNaN(d.getTime())) continue;
      var theirs = t.getAttribute('data-said') || '';
      var mine = said(d);
      var span = t.nextElementSibling && t.nextElementSibling.classList.contains('yours') ? t.nextElementSibling : null;
      if (mine === theirs) { if (span) span.remove(); continue; }
      if (!span) {
        span = document.createElement('span');
        span.className = 'yours';
        t.insertAdjacentElement('afterend', span);
      }
      var sameDay = mine.slice(0, 3) === theirs.slice(0, 3) && mine.length === theirs.length;
      span.textContent = ' \u00b7 ' + (sameDay ? mine.slice(4) : mine) + ' yours';
    }
  }
  function updated(iso) {
    var el = document.getElementById('updated');
    var d = new Date(iso);
    if (!el || isNaN(d.getTime())) return;
    el.textContent = 'updated ' + clock.format(d);
    el.setAttribute('data-at', iso);
  }
  // Adding leads from a file: the file is sent as the request body (its name in a header),
  // with the page's CSRF token; the answer is the import's summary, or why there was none.
  var upload = document.getElementById('upload');
  if (upload) upload.addEventListener('submit', function (e) {
    e.preventDefault();
    var input = document.getElementById('upload-file');
    var out = document.getElementById('upload-result');
    var button = upload.querySelector('button');
    function show(text, bad) { out.hidden = false; out.textContent = text; out.className = bad ? 'problem' : ''; }
    var file = input.files && input.files[0];
    if (!file) { show('Choose a lead file (CSV or .xlsx) first.', true); return; }
    var limit = Number(upload.getAttribute('data-limit'));
    if (file.size > limit) {
      show(file.name + ' is ' + (file.size / 1048576).toFixed(1) + ' MB; the dashboard takes lead files up to ' + Math.round(limit / 1048576) + ' MB: split it, or import it on the daemon host with "campaignd leads import".', true);
      return;
    }
    var campaign = document.getElementById('upload-campaign').value;
    var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
    button.disabled = true;
    show('Importing ' + file.name + ' into ' + campaign + '\u2026', false);
    fetch(upload.getAttribute('action') + '?campaign=' + encodeURIComponent(campaign), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { accept: 'application/json', 'content-type': 'application/octet-stream', 'x-csrf-token': csrf, 'x-file-name': encodeURIComponent(file.name) },
      body: file
    })
      .then(function (res) {
        return res.json().then(function (doc) {
          if (res.ok) { show(doc.text, false); input.value = ''; }
          else show(doc.error || 'HTTP ' + res.status, true);
        }, function () { show('The daemon answered HTTP ' + res.status + '.', true); });
      })
      .catch(function () { show('The upload did not reach the daemon: try again.', true); })
      .then(function () { button.disabled = false; });
  });
  var main = document.getElementById('campaigns');
  localTimes(document);
  if (!main) return;
  updated(document.getElementById('updated').getAttribute('data-at'));
  // A row of the overview opens its card: the whole row follows its name's link.
  main.addEventListener('click', function (e) {
    var row = e.target.closest && e.target.closest('tr[data-href]');
    if (!row || e.target.closest('a, button, form')) return;
    location.href = row.getAttribute('data-href');
  });
  var url = main.getAttribute('data-refresh');
  function schedule() { setTimeout(refresh, REFRESH_MS); }
  function refresh() {
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (res) {
        if (res.status === 401) { location.reload(); return null; }
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(function (doc) {
        if (!doc) return;
        document.getElementById('daemon').innerHTML = doc.html.daemon;
        main.innerHTML = doc.html.campaigns;
        localTimes(document);
        updated(doc.data.generated_at);
        document.body.classList.remove('stale');
      })
      .catch(function () { document.body.classList.add('stale'); })
      .then(schedule);
  }
  schedule();
})();
`;
