// The dashboard's stylesheet, served at /dashboard/style.css: system fonts only.
export const STYLESHEET = `:root{--bg:#f5f6f8;--card:#fff;--ink:#1d2330;--muted:#6b7280;--line:#e3e6eb;--ok:#1a7f37;--bad:#c62828;--accent:#2563eb;
--completed:#1a7f37;--maxed:#d97706;--invalid:#9ca3af;--suppressed:#6b21a8;--cancelled:#475569;--calling:#2563eb;--retry:#60a5fa;--pending:#dbe3ee}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
body.stale #campaigns{opacity:.6}
h1{font-size:20px;margin:0 16px 0 0}
h2{font-size:16px;margin:0;display:inline}
h3{font-size:12px;font-weight:600;color:var(--muted);margin:10px 0 4px;text-transform:uppercase;letter-spacing:.03em}
h3 small{text-transform:none;font-weight:400;letter-spacing:0}
small{color:var(--muted)}
.top{display:grid;grid-template-columns:auto 1fr auto;align-items:center;gap:8px 16px;padding:12px 20px;background:var(--card);border-bottom:1px solid var(--line)}
.facts{display:flex;flex-wrap:wrap;gap:4px 24px;margin:0}
.facts div{display:flex;gap:6px}
.facts dt{color:var(--muted)}
.facts dd{margin:0}
.ok{color:var(--ok)}.bad{color:var(--bad)}.muted{color:var(--muted)}
.problems,.problem{color:var(--bad)}
.logout{margin:0}
.search{padding:12px 20px}
.search input{width:16em;padding:5px 8px;border:1px solid var(--line);border-radius:6px;font:inherit}
button,.download{font:inherit;padding:5px 12px;border-radius:6px;border:1px solid var(--line);background:var(--card);color:var(--ink);cursor:pointer;text-decoration:none}
button.pause{border-color:var(--maxed);color:var(--maxed)}
button.resume{border-color:var(--ok);color:var(--ok)}
#search-result{margin-top:10px}
.upload{padding:0 20px 12px}
.upload form{margin:0}
.upload select{font:inherit;padding:4px 6px;border:1px solid var(--line);border-radius:6px;max-width:20em}
#upload-result{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 14px;margin:8px 0 0;font-size:13px;white-space:pre-wrap;overflow-x:auto}
#upload-result.problem{border-color:var(--bad)}
.explain{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 14px;margin-bottom:8px}
.explain h3{font-size:14px;color:var(--ink);text-transform:none;margin:0 0 4px}
.attempts{border-collapse:collapse;font-size:13px}
.attempts th,.attempts td{text-align:left;padding:2px 10px 2px 0;border-bottom:1px solid var(--line)}
#campaigns{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:14px;padding:0 20px 20px}
.campaign{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px}
.state{font-size:12px;padding:1px 8px;border-radius:10px;background:var(--pending);vertical-align:2px}
.st-running{background:#dcfce7;color:var(--ok)}.st-paused{background:#fef3c7;color:#92400e}.st-stopped{background:#fee2e2;color:var(--bad)}.st-completed{background:#e0e7ff;color:#3730a3}
.row{display:flex;flex-wrap:wrap;gap:0 20px}
.cell{flex:1 1 120px}.cell.wide{flex:2 1 240px}
.cell p{margin:0}
.live{font-size:18px}
svg{display:block;width:100%}
svg.bar{height:14px;border-radius:3px}
svg.meter{height:8px;margin-top:4px;max-width:140px}
svg.hours{height:40px}
svg.ci{height:12px;width:160px}.ci{fill:#93b4f0}.rate{fill:var(--ink)}
.variants{border-collapse:collapse;font-size:13px;margin-bottom:6px}.variants th{text-align:right;font-size:12px;font-weight:600;color:var(--muted);padding:2px 8px}.variants td{text-align:right;padding:2px 8px;white-space:nowrap}.variants th:first-child,.variants td:first-child{text-align:left}
.empty{fill:#eef1f5}.fill{fill:var(--calling)}.fill.full{fill:var(--maxed)}
.col{fill:#93b4f0}.col.now{fill:var(--accent)}.axis{stroke:var(--line)}
.s-completed{fill:var(--completed);background:var(--completed)}.s-maxed{fill:var(--maxed);background:var(--maxed)}.s-invalid{fill:var(--invalid);background:var(--invalid)}.s-suppressed{fill:var(--suppressed);background:var(--suppressed)}.s-cancelled{fill:var(--cancelled);background:var(--cancelled)}.s-calling{fill:var(--calling);background:var(--calling)}.s-retry{fill:var(--retry);background:var(--retry)}.s-pending{fill:var(--pending);background:var(--pending)}.s-moved{fill:#0e7490;background:#0e7490}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;list-style:none;margin:4px 0 0;padding:0;font-size:12px;color:var(--muted)}
.legend b{color:var(--ink);font-weight:600}
.sw{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:4px}
.yours{color:var(--muted);font-size:12px}
.actions{display:flex;gap:8px;align-items:center;margin-top:12px;padding-top:10px;border-top:1px solid var(--line)}
.actions form{margin:0}
#campaigns.many{display:block}
.overview{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:8px 0 4px;overflow-x:auto}
.filters{display:flex;flex-wrap:wrap;gap:6px;padding:4px 12px 8px}
.filter{padding:3px 10px;border:1px solid var(--line);border-radius:14px;color:var(--ink);text-decoration:none;font-size:13px}
.filter b{font-weight:600;color:var(--muted)}
.filter[aria-current]{background:var(--ink);border-color:var(--ink);color:#fff}.filter[aria-current] b{color:#fff}
.filter.alert b{color:var(--bad)}.filter.alert[aria-current]{background:var(--bad);border-color:var(--bad)}
.overview-table{width:100%;border-collapse:collapse;font-size:13px}
.overview-table th{text-align:left;font-size:12px;font-weight:600;color:var(--muted);padding:4px 10px;border-bottom:1px solid var(--line);white-space:nowrap}
.overview-table th a{color:inherit;text-decoration:none}
.overview-table th[aria-sort] a{color:var(--ink)}
.overview-table td{padding:3px 10px;border-bottom:1px solid var(--line);white-space:nowrap;vertical-align:middle}
.c-row{cursor:pointer}.c-row:hover{background:#f0f4fb}.c-row.opened{background:#e8effc}
.c-row .name a{color:var(--ink);font-weight:600;text-decoration:none}
.c-row.has-problem{box-shadow:inset 3px 0 0 var(--bad)}
.c-row .window,.c-row .window .ok{color:var(--ink)}
.c-row td.problem{white-space:normal;max-width:28em}
.num{text-align:right;font-variant-numeric:tabular-nums}
.progress{min-width:150px}.progress svg.bar{display:inline-block;width:100px;height:10px;vertical-align:-1px;margin-right:6px}
.card-row>td{padding:10px;background:#e8effc}
footer{padding:0 20px 16px;color:var(--muted);font-size:12px}
.campaign footer{padding:10px 0 0}
.login{max-width:340px;margin:12vh auto;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px}
.login form{display:flex;flex-direction:column;gap:8px}
.login input{padding:6px 8px;border:1px solid var(--line);border-radius:6px;font:inherit}
.none{color:var(--muted)}
@media (max-width:520px){#campaigns{grid-template-columns:1fr;padding:0 8px 8px}.top{grid-template-columns:1fr auto}.top #daemon{grid-row:2;grid-column:1/3}.top,.search,.upload{padding:10px}}
`;
