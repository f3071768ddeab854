// The dashboard's one client script, served at /dashboard/app.js. It never builds HTML
// from data: it swaps in fragments the server rendered (escaped there) and writes the
// viewer's local times with textContent.
export const CLIENT_SCRIPT = `'use strict';
(function () {
  var REFRESH_MS = 2000;
  var fmt = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  function localTimes(root) {
    var times = root.querySelectorAll('time[data-local]');
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      var d = new Date(t.getAttribute('datetime'));
      if (isNaN(d.getTime())) continue;
      var span = t.nextElementSibling && t.nextElementSibling.classList.contains('yours') ? t.nextElementSibling : null;
      if (!span) {
        span = document.createElement('span');
        span.className = 'yours';
        t.insertAdjacentElement('afterend', span);
      }
      span.textContent = ' (your time: ' + fmt.format(d) + ')';
    }
  }
  var main = document.getElementById('campaigns');
  localTimes(document);
  if (!main) return;
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
        var updated = document.getElementById('updated');
        updated.textContent = 'updated ' + doc.data.generated_at;
        updated.setAttribute('data-at', doc.data.generated_at);
        document.body.classList.remove('stale');
      })
      .catch(function () { document.body.classList.add('stale'); })
      .then(schedule);
  }
  schedule();
})();
`;
