"""What the course site puts around each page (tools/build_site.py): the reader's tools.

- a sticky top bar: course title, buttons for the course list and the page's contents (drawers below
  1100 px), a one-click link to the exercises, a search box and a light/dark/auto theme switch;
- a course sidebar (every page, the current one marked) and a sticky in-page contents (h2/h3) with the
  section being read highlighted;
- search that works from file:// (Chromium refuses fetch() of JSON there): every page's sections
  (heading + text, folded solutions left out) are written to search-index.js, loaded with a <script>
  only when the search box is first used, and searched with MiniSearch (npm `minisearch`, vendored into
  lib/minisearch/ from the npm cache like MathJax; prefix and light fuzzy matching, which suits Korean
  words followed by particles: "어텐션" finds "어텐션은");
- code and printed outputs that scroll sideways instead of wrapping, tables in a scroll box with a
  shadow on the side that has more, a copy button on code, figures on a light card in the dark theme;
- per notebook page a row of actions under the title (.ipynb download, handout PDF, Binder, repository);
- Korean alt text for figures ("그림: <nearest heading>"), and ❌/✅ drawn as inline SVG marks so that
  they show without an emoji font.
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

THEME_VARS = {
    "light": {
        "--c-bg": "#ffffff",
        "--c-fg": "#1d1d1f",
        "--c-muted": "#5a5f66",
        "--c-border": "#dcdfe3",
        "--c-link": "#0b5cad",
        "--c-panel": "#f6f8fa",
        "--c-current": "#e8f0fb",
        "--c-mark": "#fff0a8",
        "--c-shadow": "rgba(0, 0, 0, 0.22)",
    },
    "dark": {
        "--c-bg": "#15171a",
        "--c-fg": "#e4e6e9",
        "--c-muted": "#a4a9b0",
        "--c-border": "#3a3f46",
        "--c-link": "#80b9ff",
        "--c-panel": "#1e2227",
        "--c-current": "#233246",
        "--c-mark": "#6b5a12",
        "--c-shadow": "rgba(0, 0, 0, 0.75)",
        # JupyterLab's own variables, which nbconvert's lab stylesheet reads
        "--jp-layout-color0": "#15171a",
        "--jp-layout-color1": "#15171a",
        "--jp-layout-color2": "#22262b",
        "--jp-layout-color3": "#2d3238",
        "--jp-content-font-color0": "#f2f3f5",
        "--jp-content-font-color1": "#e4e6e9",
        "--jp-content-font-color2": "#c5c9ce",
        "--jp-content-font-color3": "#a4a9b0",
        "--jp-ui-font-color0": "#f2f3f5",
        "--jp-ui-font-color1": "#e4e6e9",
        "--jp-ui-font-color2": "#c5c9ce",
        "--jp-ui-font-color3": "#a4a9b0",
        "--jp-content-link-color": "#80b9ff",
        "--jp-cell-editor-background": "#1e2227",
        "--jp-cell-editor-border-color": "#3a3f46",
        "--jp-border-color0": "#3a3f46",
        "--jp-border-color1": "#3a3f46",
        "--jp-border-color2": "#2d3238",
        "--jp-rendermime-table-row-background": "#1e2227",
        "--jp-rendermime-table-row-hover-background": "#27303a",
        "--jp-rendermime-error-background": "#3a2020",
        "--jp-mirror-editor-keyword-color": "#6fcf86",
        "--jp-mirror-editor-atom-color": "#8fb4ff",
        "--jp-mirror-editor-number-color": "#9fd89f",
        "--jp-mirror-editor-def-color": "#8fb4ff",
        "--jp-mirror-editor-variable-color": "#e4e6e9",
        "--jp-mirror-editor-variable-2-color": "#9cd3ff",
        "--jp-mirror-editor-variable-3-color": "#5fd3c0",
        "--jp-mirror-editor-punctuation-color": "#b8c0c8",
        "--jp-mirror-editor-property-color": "#9cd3ff",
        "--jp-mirror-editor-operator-color": "#e09cf0",
        "--jp-mirror-editor-comment-color": "#98a2ad",
        "--jp-mirror-editor-string-color": "#f0a878",
        "--jp-mirror-editor-string-2-color": "#ffb86b",
        "--jp-mirror-editor-meta-color": "#e09cf0",
        "--jp-mirror-editor-qualifier-color": "#b8c0c8",
        "--jp-mirror-editor-builtin-color": "#5fd3c0",
        "--jp-mirror-editor-bracket-color": "#b8c0c8",
        "--jp-mirror-editor-tag-color": "#8fb4ff",
        "--jp-mirror-editor-attribute-color": "#9cd3ff",
        "--jp-mirror-editor-header-color": "#8fb4ff",
        "--jp-mirror-editor-quote-color": "#6fcf86",
        "--jp-mirror-editor-link-color": "#80b9ff",
        "--jp-mirror-editor-error-color": "#ff7b7b",
    },
}


def _vars(theme: str) -> str:
    return " ".join(f"{k}: {v};" for k, v in THEME_VARS[theme].items())


CHROME_CSS = (
    f":root {{ {_vars('light')} color-scheme: light; }}\n"
    f"@media (prefers-color-scheme: dark) {{ :root:not([data-theme=light]) {{ {_vars('dark')} color-scheme: dark; }} }}\n"
    f":root[data-theme=dark] {{ {_vars('dark')} color-scheme: dark; }}\n"
    """
body { background: var(--c-bg); color: var(--c-fg); }
body.jp-Notebook { padding: 0 !important; }
a { color: var(--c-link); }
[id] { scroll-margin-top: 64px; }
.course-skip { position: absolute; left: -999px; top: 0; }
.course-skip:focus { left: 8px; z-index: 100; background: var(--c-bg); padding: 4px 8px; }
.course-top { position: sticky; top: 0; z-index: 60; display: flex; align-items: center; gap: 8px; height: 52px;
  padding: 0 12px; box-sizing: border-box; background: var(--c-bg); border-bottom: 1px solid var(--c-border);
  font-size: 15px; line-height: 1.3; }
.course-top .course-brand { font-weight: bold; color: var(--c-fg); text-decoration: none; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; flex: 0 1 auto; min-width: 0; }
.course-top button, .course-top .course-top-link { font: inherit; font-size: 14px; padding: 5px 9px; border-radius: 6px;
  border: 1px solid var(--c-border); background: var(--c-panel); color: var(--c-fg); cursor: pointer;
  white-space: nowrap; text-decoration: none; flex: 0 0 auto; }
.course-top button[aria-expanded=true] { background: var(--c-current); }
.course-search { position: relative; flex: 1 1 12em; min-width: 5em; max-width: 28em; margin-left: auto; }
.course-search input { box-sizing: border-box; width: 100%; font: inherit; font-size: 15px; padding: 5px 9px;
  border: 1px solid var(--c-border); border-radius: 6px; background: var(--c-bg); color: var(--c-fg); }
.course-search-results { position: fixed; top: 52px; right: 8px; width: min(36em, calc(100vw - 16px));
  max-height: calc(100vh - 70px); overflow-y: auto; box-sizing: border-box; background: var(--c-bg);
  border: 1px solid var(--c-border); border-radius: 8px; box-shadow: 0 8px 24px var(--c-shadow); z-index: 70;
  padding: 4px 0; margin: 0; list-style: none; word-break: keep-all; overflow-wrap: anywhere; }
.course-search-results[hidden] { display: none; }
.course-search-results li { padding: 0; margin: 0; }
.course-search-results a { display: block; padding: 7px 12px; text-decoration: none; color: var(--c-fg); }
.course-search-results a:hover, .course-search-results a:focus { background: var(--c-current); outline: none; }
.course-search-results .where { display: block; font-size: 13px; color: var(--c-muted); }
.course-search-results .what { display: block; font-weight: bold; color: var(--c-link); }
.course-search-results .snippet { display: block; font-size: 13.5px; color: var(--c-fg); }
.course-search-results .none { padding: 8px 12px; color: var(--c-muted); }
.course-search-results mark { background: var(--c-mark); color: inherit; }
.course-layout { display: grid; grid-template-columns: 15rem minmax(0, 1fr) 14rem; gap: 0 24px; max-width: 1480px;
  margin: 0 auto; }
.course-layout > .course-page { max-width: 980px; width: 100%; margin: 0 auto; min-width: 0; }
.course-sidebar, .course-toc { position: sticky; top: 52px; align-self: start; max-height: calc(100vh - 52px);
  overflow-y: auto; box-sizing: border-box; padding: 14px 4px 24px 12px; font-size: 14px; line-height: 1.45; }
.course-sidebar h2, .course-toc h2 { font-size: 13px; margin: 0 0 6px; color: var(--c-muted); font-weight: bold; }
.course-sidebar ol, .course-toc ol { list-style: none; margin: 0; padding: 0; }
.course-sidebar li a, .course-toc li a { display: block; padding: 3px 8px; border-radius: 5px; color: var(--c-fg);
  text-decoration: none; border-left: 3px solid transparent; }
.course-sidebar li a:hover, .course-toc li a:hover { background: var(--c-panel); }
.course-sidebar li a[aria-current=page] { background: var(--c-current); border-left-color: var(--c-link); font-weight: bold; }
.course-toc li.level3 a { padding-left: 20px; font-size: 13px; }
.course-toc li a.active { border-left-color: var(--c-link); background: var(--c-panel); }
.course-toc .course-toc-exercises { display: block; margin-top: 10px; font-weight: bold; }
.course-drawer-only { display: none; }
@media (max-width: 1099px) {
  .course-layout { display: block; }
  .course-drawer-only { display: inline-block; }
  .course-sidebar, .course-toc { display: none; }
  .course-sidebar.open, .course-toc.open { display: block; position: fixed; top: 52px; left: 0; right: 0; bottom: 0;
    height: calc(100vh - 52px); max-height: none; z-index: 55; background: var(--c-bg); padding: 14px 18px 40px; font-size: 16px; }
}
@media (max-width: 640px) {
  .course-layout > .course-page { padding-left: 10px; padding-right: 10px; }
  .course-top { gap: 5px; padding: 0 6px; }
  .course-top .course-brand, .course-top .course-wide { display: none; }
  .course-top button, .course-top .course-top-link { padding: 5px 6px; }
}
.course-actions { display: flex; flex-wrap: wrap; gap: 6px 8px; margin: 4px 0 14px; font-size: 14.5px; line-height: 1.3; }
.course-actions a { display: inline-block; padding: 5px 10px; border: 1px solid var(--c-border); border-radius: 6px;
  background: var(--c-panel); color: var(--c-link); text-decoration: none; }
.course-actions a:hover { text-decoration: underline; }
.course-nav { border-color: var(--c-border) !important; }
.course-nav a { color: var(--c-link) !important; }
/* code and printed outputs keep their lines and scroll sideways; the boxes around them may shrink */
.course-page .jp-Cell, .course-page .jp-InputArea, .course-page .jp-OutputArea, .course-page .jp-OutputArea-child,
.course-page .jp-OutputArea-output, .course-page .jp-InputArea-editor, .course-page .jp-Cell-inputWrapper,
.course-page .jp-Cell-outputWrapper { min-width: 0; max-width: 100%; }
.course-page .jp-InputArea-editor pre, .course-page .jp-OutputArea-output pre, .course-page pre {
  white-space: pre !important; overflow-wrap: normal !important; word-break: normal !important; overflow-x: auto; }
.course-page .jp-InputArea-editor { position: relative; }
.course-copy { position: absolute; top: 4px; right: 4px; z-index: 2; font: inherit; font-size: 12.5px; line-height: 1.2;
  padding: 3px 7px; border: 1px solid var(--c-border); border-radius: 5px; background: var(--c-bg); color: var(--c-muted);
  cursor: pointer; opacity: 0.75; }
.course-copy:hover, .course-copy:focus { opacity: 1; color: var(--c-fg); }
.course-page .jp-InputArea-editor div.highlight pre { padding-top: 2.1em; }  /* code starts below the copy button */
.course-page .MathJax_Display, .course-page .MJXc-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
.course-page td .MathJax_CHTML, .course-page th .MathJax_CHTML { white-space: nowrap; }
/* tables: a scroll box, with a shadow on the side that holds more */
.course-table { position: relative; max-width: 100%; margin: 0.6em 0; }
.course-table > .course-table-scroll { overflow-x: auto; max-width: 100%; }
.course-table > .course-table-scroll > table { margin: 0; }
.course-table::before, .course-table::after { content: ""; position: absolute; top: 0; bottom: 0; width: 18px;
  pointer-events: none; opacity: 0; transition: opacity 0.15s; z-index: 1; }
.course-table::before { left: 0; background: linear-gradient(to right, var(--c-shadow), transparent); }
.course-table::after { right: 0; background: linear-gradient(to left, var(--c-shadow), transparent); }
.course-table.more-left::before, .course-table.more-right::after { opacity: 1; }
.course-scroll-hint { display: none; font-size: 12.5px; color: var(--c-muted); margin: 0 0 2px; }
.course-table.more-right .course-scroll-hint, .course-table.more-left .course-scroll-hint { display: block; }
/* figures on a light card, readable in the dark theme */
.course-page .jp-OutputArea-output img, .course-page img.course-frame { background: #fff; border-radius: 4px; }
:root[data-theme=dark] .course-page .jp-OutputArea-output img, :root[data-theme=dark] .course-page img.course-frame {
  padding: 4px; box-sizing: border-box; }
@media (prefers-color-scheme: dark) { :root:not([data-theme=light]) .course-page .jp-OutputArea-output img,
  :root:not([data-theme=light]) .course-page img.course-frame { padding: 4px; box-sizing: border-box; } }
details.course-solution { background: var(--c-panel) !important; border-color: var(--c-border) !important; }
details.course-solution > summary { color: var(--c-link) !important; }
.course-mark { display: inline-block; width: 1.05em; height: 1.05em; vertical-align: -0.17em; }
.course-mark svg { display: block; width: 100%; height: 100%; }
.course-page .jp-RenderedHTMLCommon a.anchor-link { visibility: hidden; }
.course-page .jp-RenderedHTMLCommon :hover > a.anchor-link { visibility: visible; }
.course-md a.anchor-link { visibility: hidden; text-decoration: none; }
.course-md :hover > a.anchor-link { visibility: visible; }
"""
)

# Runs in <head>, before the first paint: the remembered theme, so a dark page never flashes light.
THEME_HEAD_JS = """(function () { try { var t = localStorage.getItem('course-theme');
  if (t === 'light' || t === 'dark') document.documentElement.setAttribute('data-theme', t); } catch (e) {} })();"""

CHROME_JS = r"""
(function () {
  var doc = document.documentElement;
  // ---- theme: auto -> dark -> light -> auto, remembered in localStorage
  var themeButton = document.getElementById('course-theme');
  var THEME_NAMES = {auto: '자동', dark: '어둡게', light: '밝게'};
  function currentTheme() { return doc.getAttribute('data-theme') || 'auto'; }
  function showTheme() {
    var t = currentTheme();
    themeButton.querySelector('.course-theme-name').textContent = THEME_NAMES[t];
    var next = THEME_NAMES[{auto: 'dark', dark: 'light', light: 'auto'}[t]];
    var label = '화면 테마: ' + THEME_NAMES[t] + ' (누르면 ' + next + ')';
    themeButton.setAttribute('aria-label', label); themeButton.title = label;
  }
  if (themeButton) {
    showTheme();
    themeButton.addEventListener('click', function () {
      var next = {auto: 'dark', dark: 'light', light: 'auto'}[currentTheme()];
      if (next === 'auto') doc.removeAttribute('data-theme'); else doc.setAttribute('data-theme', next);
      try { localStorage.setItem('course-theme', next); } catch (e) {}
      showTheme();
    });
  }
  // ---- drawers (course list, page contents) below 1100 px
  var drawers = [].slice.call(document.querySelectorAll('[data-drawer]'));
  function closeDrawers(except) {
    drawers.forEach(function (b) {
      if (b === except) return;
      b.setAttribute('aria-expanded', 'false');
      var p = document.getElementById(b.getAttribute('aria-controls')); if (p) p.classList.remove('open');
    });
  }
  drawers.forEach(function (b) {
    b.addEventListener('click', function () {
      var p = document.getElementById(b.getAttribute('aria-controls'));
      var open = !p.classList.contains('open');
      closeDrawers(b);
      p.classList.toggle('open', open); b.setAttribute('aria-expanded', open ? 'true' : 'false');
    });
  });
  document.querySelectorAll('.course-sidebar a, .course-toc a').forEach(function (a) {
    a.addEventListener('click', function () { closeDrawers(null); });
  });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') { closeDrawers(null); hideResults(); } });
  // ---- the section being read, marked in the contents
  var tocLinks = {};
  document.querySelectorAll('.course-toc li a').forEach(function (a) { tocLinks[a.getAttribute('href').slice(1)] = a; });
  var headings = Object.keys(tocLinks).map(function (id) { return document.getElementById(id); }).filter(Boolean);
  if (headings.length && window.IntersectionObserver) {
    var active = null;
    var io = new IntersectionObserver(function () {
      var best = null;
      headings.forEach(function (h) { if (h.getBoundingClientRect().top < 120) best = h; });
      if (!best) best = headings[0];
      if (active) active.classList.remove('active');
      active = tocLinks[best.id]; active.classList.add('active');
    }, {rootMargin: '0px 0px -60% 0px'});
    headings.forEach(function (h) { io.observe(h); });
  }
  // ---- tables: a shadow on the side that holds more
  function edges(box) {
    var s = box.querySelector('.course-table-scroll');
    box.classList.toggle('more-left', s.scrollLeft > 1);
    box.classList.toggle('more-right', s.scrollLeft + s.clientWidth < s.scrollWidth - 1);
  }
  var tables = [].slice.call(document.querySelectorAll('.course-table'));
  tables.forEach(function (box) {
    box.querySelector('.course-table-scroll').addEventListener('scroll', function () { edges(box); }, {passive: true});
  });
  // measured after the first paint, not while the page is parsed (no forced layout before the first picture)
  requestAnimationFrame(function () { setTimeout(function () { tables.forEach(edges); }, 0); });
  window.addEventListener('resize', function () { tables.forEach(edges); });
  window.addEventListener('load', function () { tables.forEach(edges); });
  // ---- copy buttons on code
  document.querySelectorAll('.jp-InputArea-editor').forEach(function (ed) {
    var pre = ed.querySelector('pre'); if (!pre) return;
    var b = document.createElement('button');
    b.type = 'button'; b.className = 'course-copy'; b.textContent = '복사'; b.setAttribute('aria-label', '코드 복사');
    b.addEventListener('click', function () {
      var text = pre.innerText;
      function done() {
        b.textContent = '복사됨'; b.setAttribute('aria-label', '복사됨');
        setTimeout(function () { b.textContent = '복사'; b.setAttribute('aria-label', '코드 복사'); }, 1500);
      }
      function fallback() {
        var t = document.createElement('textarea'); t.value = text; document.body.appendChild(t); t.select();
        try { document.execCommand('copy'); done(); } catch (e) {} document.body.removeChild(t);
      }
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, fallback);
      else fallback();
    });
    ed.appendChild(b);
  });
  // ---- search: the index (search-index.js) and MiniSearch load on first use, with <script> (works on file://)
  var input = document.getElementById('course-search-input');
  var list = document.getElementById('course-search-results');
  var engine = null, waiting = [];
  function load(src, then) {
    var s = document.createElement('script'); s.src = src; s.onload = then;
    s.onerror = function () { list.hidden = false; list.innerHTML = '<li class="none">검색 색인을 읽지 못했습니다.</li>'; };
    document.head.appendChild(s);
  }
  function withEngine(then) {
    if (engine) return then(engine);
    waiting.push(then);
    if (waiting.length > 1) return;
    load('lib/minisearch/index.js', function () {
      load('search-index.js', function () {
        engine = new MiniSearch({
          fields: ['h', 'x', 't'], storeFields: ['p', 'a', 'h', 't', 'x'],
          searchOptions: {prefix: true, boost: {h: 3, t: 1.5}, combineWith: 'AND',
            fuzzy: function (term) { return term.length > 4 ? 0.2 : false; }}
        });
        engine.addAll(window.COURSE_SEARCH_DOCS);
        var w = waiting; waiting = [];
        w.forEach(function (f) { f(engine); });
      });
    });
  }
  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; });
  }
  function snippet(text, terms) {
    var low = text.toLowerCase(), at = -1, len = 0;
    terms.forEach(function (t) { var i = low.indexOf(t.toLowerCase()); if (i >= 0 && (at < 0 || i < at)) { at = i; len = t.length; } });
    if (at < 0) return escapeHtml(text.slice(0, 110)) + (text.length > 110 ? '…' : '');
    var from = Math.max(0, at - 45), to = Math.min(text.length, at + len + 70);
    return (from > 0 ? '…' : '') + escapeHtml(text.slice(from, at)) + '<mark>' + escapeHtml(text.slice(at, at + len)) +
      '</mark>' + escapeHtml(text.slice(at + len, to)) + (to < text.length ? '…' : '');
  }
  function results(query) {
    var hits = engine.search(query);
    if (!hits.length) hits = engine.search(query, {combineWith: 'OR'});
    var term = query.trim();  // a glossary term searched as written: its row first (sort is stable)
    hits.sort(function (a, b) { return (b.p === 'glossary.html' && b.h === term) - (a.p === 'glossary.html' && a.h === term); });
    return hits.slice(0, 30).map(function (r) {
      return {url: r.p + (r.a ? '#' + r.a : ''), page: r.p, heading: r.h, title: r.t,
              snippet: snippet(r.x || '', Object.keys(r.match))};
    });
  }
  // for tests and scripts: window.courseSearch('어텐션').then(list of {url, page, heading, title})
  window.courseSearch = function (query) { return new Promise(function (ok) { withEngine(function () { ok(results(query)); }); }); };
  function hideResults() { if (list) list.hidden = true; }
  function render() {
    var q = input.value.trim();
    if (!q) { hideResults(); return; }
    withEngine(function () {
      if (input.value.trim() !== q) return;
      var rs = results(q);
      list.innerHTML = rs.length ? rs.map(function (r) {
        return '<li><a href="' + escapeHtml(r.url) + '"><span class="where">' + escapeHtml(r.title) + '</span>' +
          '<span class="what">' + escapeHtml(r.heading) + '</span><span class="snippet">' + r.snippet + '</span></a></li>';
      }).join('') : '<li class="none">"' + escapeHtml(q) + '" 검색 결과가 없습니다.</li>';
      list.hidden = false;
      list.querySelectorAll('a').forEach(function (a) { a.addEventListener('click', hideResults); });
    });
  }
  if (input) {
    var timer = null;
    input.addEventListener('focus', function () { withEngine(function () {}); });
    input.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(render, 120); });
    input.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') {
        e.preventDefault(); clearTimeout(timer); render();
        withEngine(function () { var a = list.querySelector('a'); if (a) { hideResults(); location.href = a.href; } });
      } else if (e.key === 'ArrowDown') { var a = list.querySelector('a'); if (a) { e.preventDefault(); a.focus(); } }
    });
    document.addEventListener('click', function (e) { if (!e.target.closest('.course-search, .course-search-results')) hideResults(); });
  }
})();
"""


def _svg(kind: str) -> str:
    if kind == "no":
        return (
            '<svg viewBox="0 0 16 16" aria-hidden="true"><circle cx="8" cy="8" r="7.5" fill="#d93a3a"/>'
            '<path d="M5 5l6 6M11 5l-6 6" stroke="#fff" stroke-width="2" stroke-linecap="round"/></svg>'
        )
    return (
        '<svg viewBox="0 0 16 16" aria-hidden="true"><rect x="0.5" y="0.5" width="15" height="15" rx="3" fill="#2e9b4f"/>'
        '<path d="M4 8.3l2.6 2.6L12 5.4" stroke="#fff" stroke-width="2" fill="none" stroke-linecap="round" '
        'stroke-linejoin="round"/></svg>'
    )


MARKS = {
    "\u274c": f'<span class="course-mark" role="img" aria-label="틀림">{_svg("no")}</span>',
    "\u2705": f'<span class="course-mark" role="img" aria-label="맞음">{_svg("yes")}</span>',
}
_MARK_RE = re.compile(r"(<[^>]*>)|(\u274c|\u2705|&#10060;|&#x274[cC];|&#9989;|&#x2705;)")


def emoji_marks(body: str) -> str:
    """❌ and ✅ outside tags as inline SVG marks (no emoji font needed)."""

    def sub(m: re.Match) -> str:
        if m[1]:
            return m[1]
        return MARKS[html.unescape(m[2])]

    return _MARK_RE.sub(sub, body)


def wrap_tables(body: str) -> str:
    """Every <table> in a scroll box with edge shadows (CHROME_JS sets which side has more)."""
    body = re.sub(
        r"<table\b",
        '<div class="course-table"><p class="course-scroll-hint">표가 옆으로 이어집니다 ↔ (옆으로 밀어 보세요)</p>'
        '<div class="course-table-scroll" tabindex="0"><table',
        body,
    )
    return body.replace("</table>", "</table></div></div>")


def strip_tags(fragment: str) -> str:
    text = re.sub(r'<a class="anchor-link"[^>]*>.*?</a>', "", fragment, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


HEADING_RE = re.compile(r"<h([1-3])\b[^>]*\bid=\"([^\"]+)\"[^>]*>(.*?)</h\1>", re.S)


def headings(body: str) -> list[tuple[int, str, str]]:
    """(level, id, text) of every h1-h3 with an id, in order."""
    return [(int(m[1]), m[2], strip_tags(m[3])) for m in HEADING_RE.finditer(body)]


def korean_alt_text(body: str) -> str:
    """nbconvert's English alt text (and the explorers' bare one) as "그림: <nearest heading before it>"."""
    out, last, heading = [], 0, ""
    token = re.compile(
        r"<h[1-3]\b[^>]*>(.*?)</h[1-3]>|alt=\"(No description has been provided for this image|탐색기 그림)\"", re.S
    )
    for m in token.finditer(body):
        if m[1] is not None:
            heading = strip_tags(m[1]).replace("$", "")
            continue
        out.append(body[last : m.start()])
        label = "그림" if m[2].startswith("No description") else "탐색기 그림"
        # "탐색기 그림: 3. 패딩 수와 인과 마스크", not "…: 3. 슬라이더: 패딩 수와 인과 마스크" (the label says it)
        named = re.sub(r"^(\d+\.\s*)?슬라이더:\s*", r"\1", heading) if label == "탐색기 그림" else heading
        out.append(f'alt="{html.escape(f"{label}: {named}" if named else label)}"')
        last = m.end()
    out.append(body[last:])
    return "".join(out)


class _Sections(HTMLParser):
    """Split a page body into sections at h1-h3 headings with ids (and glossary rows); text of folded solutions, scripts,
    styles and heading anchors (¶) is left out."""

    SKIP = {"script", "style"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: list[dict] = [{"a": "", "h": "", "x": []}]
        self.skip = 0  # depth inside script/style/folded solutions/anchor links
        self.skip_tag: list[str] = []
        self.heading: list[str] | None = None
        self.heading_tag = ""
        self.row_cells: int | None = None  # cells seen in the current glossary row (None: not in one)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        if self.skip:
            if tag == self.skip_tag[-1]:
                self.skip_tag.append(tag)
                self.skip += 1
            return
        if (
            tag in self.SKIP
            or (tag == "details" and "course-solution" in cls)
            or (tag == "a" and "anchor-link" in cls)
            or (tag in ("nav", "aside", "header") and "course-" in cls)
            # the page's own chrome: scroll hints, download buttons, explorer notes are not lesson text
            or (
                tag in ("p", "div")
                and any(
                    k in cls for k in ("course-scroll-hint", "course-actions", "course-explorer-note", "course-control")
                )
            )
        ):
            self.skip_tag.append(tag)
            self.skip = 1
            return
        if tag == "tr" and a.get("id") and a.get("data-term"):  # a glossary row: its own section, the term its heading
            self.sections.append({"a": a["id"], "h": a["data-term"], "x": []})
            self.row_cells = 0
        elif tag == "td" and self.row_cells is not None:  # the row's columns apart in the snippet: "용어 · 영어 · 뜻"
            self._text(" · " if self.row_cells else " ")
            self.row_cells += 1
        elif tag in ("h1", "h2", "h3") and a.get("id"):
            self.heading, self.heading_tag = [], tag
            self.sections.append({"a": a["id"], "h": "", "x": []})
        elif tag in ("p", "div", "li", "tr", "pre", "br", "td", "th"):
            self._text(" ")

    def handle_endtag(self, tag):
        if tag == "tr":
            self.row_cells = None
        if self.skip:
            if tag == self.skip_tag[-1]:
                self.skip_tag.pop()
                self.skip -= 1
            return
        if self.heading is not None and tag == self.heading_tag:
            self.sections[-1]["h"] = " ".join("".join(self.heading).split())
            self.heading = None

    def handle_data(self, data):
        if not self.skip:
            self._text(data)

    def _text(self, data):
        if self.heading is not None:
            self.heading.append(data)
        else:
            self.sections[-1]["x"].append(data)


def search_sections(page: str, title: str, body: str) -> list[dict]:
    """The search index's documents for one page: one per section {p, t, a, h, x}."""
    m = re.search(r"<body[^>]*>(.*)</body>", body, re.S)
    parser = _Sections()
    parser.feed(m[1] if m else body)
    parser.close()
    docs = []
    for s in parser.sections:
        text = " ".join(plain_tex("".join(s["x"])).split())
        if not text and not s["h"]:
            continue
        docs.append({"p": page, "t": title, "a": s["a"], "h": plain_tex(s["h"] or title), "x": text})
    return docs


TEX_WORDS = {
    "sqrt": "√",
    "approx": "≈",
    "cdot": "·",
    "times": "×",
    "top": "ᵀ",
    "le": "≤",
    "ge": "≥",
    "leq": "≤",
    "geq": "≥",
    "ne": "≠",
    "infty": "∞",
    "sum": "Σ",
    "tau": "τ",
    "sigma": "σ",
    "mu": "μ",
    "alpha": "α",
    "beta": "β",
    "theta": "θ",
    "pi": "π",
    "ldots": "…",
    "dots": "…",
    "to": "→",
    "in": "∈",
    "mid": "|",
}


def plain_tex(text: str) -> str:
    """TeX as plain words for search snippets ("$\\sqrt{d_k}$" -> "√d_k"): NanumGothic draws a backslash as ₩."""
    text = text.replace("$", "")
    # a fraction keeps its bar: "\frac{QK^T}{\sqrt{d_k}}" -> "(QK^T)/(√d_k)", not a product
    for _ in range(3):  # a fraction inside a fraction: the next pass
        text = re.sub(
            r"\\frac\s*\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}\s*\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", r"(\1)/(\2)", text
        )
    text = re.sub(
        r"\\(?:left|right|bigl|bigr|big|Big|mathrm|mathbf|operatorname|text|frac|!|,|;|quad|qquad)", " ", text
    )
    text = re.sub(r"\\([A-Za-z]+)", lambda m: TEX_WORDS.get(m[1], m[1]), text)
    return text.replace("\\", " ").replace("{", "").replace("}", "")


def search_index_js(docs: list[dict]) -> str:
    numbered = [{"id": i, **d} for i, d in enumerate(docs)]
    return "window.COURSE_SEARCH_DOCS = " + json.dumps(numbered, ensure_ascii=False, separators=(",", ":")) + ";\n"


def top_bar(title: str, exercises: str | None, has_toc: bool) -> str:
    parts = [
        '<a class="course-skip" href="#course-main">본문으로 건너뛰기</a>',
        '<header class="course-top">',
        '<button type="button" class="course-drawer-only" data-drawer aria-controls="course-sidebar" '
        'aria-expanded="false" title="과정 차례" aria-label="과정 차례">과정</button>',
    ]
    if has_toc:
        parts.append(
            '<button type="button" class="course-drawer-only" data-drawer aria-controls="course-toc" '
            'aria-expanded="false" title="이 페이지의 차례" aria-label="이 페이지의 차례">차례</button>'
        )
    parts.append(f'<a class="course-brand" href="index.html">{html.escape(title)}</a>')
    if exercises:
        parts.append(f'<a class="course-top-link" href="#{exercises}">연습문제</a>')
    parts += [
        '<div class="course-search" role="search"><input type="search" id="course-search-input" '
        'placeholder="검색" aria-label="과정 전체 검색" autocomplete="off" aria-controls="course-search-results"></div>',
        '<button type="button" id="course-theme"><span aria-hidden="true">◐ </span><span class="course-wide">테마: </span>'
        '<span class="course-theme-name">자동</span></button>',
        "</header>",
        '<ul class="course-search-results" id="course-search-results" hidden></ul>',
    ]
    return "\n".join(parts)


def sidebar(entries: list[tuple[str, str]], current: str) -> str:
    """entries: (href, label); the one whose href is `current` is marked."""
    items = []
    for href, label in entries:
        here = ' aria-current="page"' if href == current else ""
        items.append(f'<li><a href="{html.escape(href)}"{here}>{html.escape(label)}</a></li>')
    return (
        '<nav class="course-sidebar" id="course-sidebar" aria-label="과정 차례"><h2>과정 차례</h2><ol>'
        + "".join(items)
        + "</ol></nav>"
    )


def toc(hs: list[tuple[int, str, str]], exercises: str | None) -> str:
    items = [
        f'<li class="level{level}"><a href="#{ident}">{html.escape(plain_tex(text))}</a></li>'  # plain: it wraps
        for level, ident, text in hs
        if level in (2, 3)
    ]
    if not items:
        return ""
    jump = f'<a class="course-toc-exercises" href="#{exercises}">연습문제로 ↓</a>' if exercises else ""
    return (
        '<aside class="course-toc" id="course-toc" aria-label="이 페이지의 차례"><h2>이 페이지의 차례</h2><ol>'
        + "".join(items)
        + f"</ol>{jump}</aside>"
    )


def exercises_anchor(hs: list[tuple[int, str, str]]) -> str | None:
    return next((ident for level, ident, text in hs if level == 2 and text.startswith("연습문제")), None)
