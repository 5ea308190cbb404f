// Reader features: skill checks, practice queue, private notes, progress.
//
// Everything is kept in this browser's localStorage under keys that start
// with "mfl:"; nothing is sent anywhere, and this file makes no request: the
// Practice page carries every skill-check question as its lesson page shows
// it (hooks/quiz.py), so it works in the offline copy opened from file:// too.
//
//   mfl:quiz:<page>  {answered, correct, total, answers: {qid: {value, raw, correct, at}}}
//                    the first answer to each question (the score counts first answers)
//   mfl:practice     [{page, qid, added}]          questions answered wrongly
//   mfl:visited      {<page>: timestamp}            lesson pages opened
//   mfl:note:<page>  {title, text, updated}         private notes
//   mfl:notes-open   {<page>: true}                 pages whose notes panel was left open
//
// <page> is the page's site-relative URL, e.g. "embedding-space-math/intuition/"
// ("embedding-space-math/intuition.html" in the offline copy).
// User text (notes, imported files) only ever goes through .value and
// .textContent, never through innerHTML.
(function () {
  "use strict";

  var PREFIX = "mfl:";
  var NOTE_LIMIT = 8000;
  var MATH_DELIMITERS = [
    { left: "$$", right: "$$", display: true },
    { left: "$", right: "$", display: false },
    { left: "\\(", right: "\\)", display: false },
    { left: "\\[", right: "\\]", display: true },
  ];

  // ---- storage ---------------------------------------------------------
  var store = {
    get: function (key, fallback) {
      try {
        var raw = window.localStorage.getItem(PREFIX + key);
        return raw === null ? fallback : JSON.parse(raw);
      } catch (e) {
        return fallback;
      }
    },
    set: function (key, value) {
      try {
        window.localStorage.setItem(PREFIX + key, JSON.stringify(value));
        return true;
      } catch (e) {
        return false; // storage full or disabled: the page still works, nothing persists
      }
    },
    remove: function (key) {
      try {
        window.localStorage.removeItem(PREFIX + key);
      } catch (e) {
        /* ignore */
      }
    },
    keys: function (sub) {
      var out = [];
      try {
        for (var i = 0; i < window.localStorage.length; i++) {
          var k = window.localStorage.key(i);
          if (k && k.indexOf(PREFIX + sub) === 0) out.push(k.slice(PREFIX.length));
        }
      } catch (e) {
        /* ignore */
      }
      return out.sort();
    },
  };

  function el(tag, props, children) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (k) {
      if (k === "text") node.textContent = props[k];
      else if (k === "className") node.className = props[k];
      else node.setAttribute(k, props[k]);
    });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function formatNumber(n) {
    n = Number(n);
    var size = Math.abs(n);
    if (size !== 0 && (size < 1e-6 || size >= 1e21)) return String(n); // 1e-7, not 0
    return n.toLocaleString("en-US", { maximumFractionDigits: 10 });
  }

  // ---- reading a typed number ---------------------------------------------
  // The answer field is plain text: a type="number" field silently drops what
  // it cannot parse ("0,6" became 6, "1/256" became 1256) and changes under
  // the mouse wheel and arrow keys. parseNumber accepts
  //   a decimal point or a decimal comma       0.6  0,6  ,5  -0.25  −0,25
  //   thousands separators, where unambiguous  12,345,678  1,234.5  1.234,5  1 000 000
  //   a fraction                               1/256  -3/4  0,5/2
  //   scientific notation                      3.9e-3  3,9E-3  3.9×10^-3  3.9*10^-3
  // and returns {value} or {error}; the error quotes what was typed and says
  // why it was not taken. "1,234" is refused: it is 1.234 or 1234 depending
  // on who wrote it. A single point is always a decimal point ("1.234" is 1.234).
  var GROUPS = {
    ",": /^\d{1,3}(?:,\d{3})+$/,
    ".": /^\d{1,3}(?:\.\d{3})+$/,
    " ": /^\d{1,3}(?: \d{3})+$/,
  };

  // Digits with optional thousands groups and at most one decimal mark, as a
  // string Number() reads; or {error}.
  function unsignedDecimal(s) {
    if (!/\d/.test(s) || /[^\d., ]/.test(s)) return { error: "" };
    if (s.indexOf(" ") !== -1) {
      var spaced = /^([\d ]+)(?:[.,](\d+))?$/.exec(s);
      if (!spaced || !GROUPS[" "].test(spaced[1])) {
        return { error: "spaces may only separate groups of three digits" };
      }
      return { text: spaced[1].replace(/ /g, "") + (spaced[2] ? "." + spaced[2] : "") };
    }
    var comma = s.indexOf(","), dot = s.indexOf(".");
    if (comma !== -1 && dot !== -1) {
      // both: the last one is the decimal mark, the other separates thousands
      var mark = s.lastIndexOf(",") > s.lastIndexOf(".") ? "," : ".";
      var sep = mark === "," ? "." : ",";
      var at = s.lastIndexOf(mark);
      var whole = s.slice(0, at), tail = s.slice(at + 1);
      if (!GROUPS[sep].test(whole) || !/^\d+$/.test(tail)) {
        return { error: "its “,” and “.” do not separate thousands and decimals" };
      }
      return { text: whole.split(sep).join("") + "." + tail };
    }
    var one = comma !== -1 ? "," : dot !== -1 ? "." : null;
    if (one === null) return { text: s };
    var parts = s.split(one);
    if (parts.length > 2) {
      if (GROUPS[one].test(s)) return { text: parts.join("") };
      return { error: "more than one “" + one + "”, and not between groups of three digits" };
    }
    var intPart = parts[0], frac = parts[1];
    if (one === "," && frac.length === 3 && /^[1-9]\d{0,2}$/.test(intPart)) {
      var decimal = intPart + "." + frac, thousands = intPart + frac;
      return { ambiguous: "could mean " + decimal + " or " + thousands + ". Type " + decimal + " or " + thousands + "." };
    }
    return { text: (intPart || "0") + "." + (frac || "0") };
  }

  var ECHO_LIMIT = 40; // characters of a refused answer quoted back
  var NUMBERISH = /^[\d\s.,+\-eE×xX*·^]*\d[\d\s.,+\-eE×xX*·^]*$/;
  var NUMBER = /^([+-]?) ?(.*?)(?: ?(?:[eE] ?([+-]?\d+)|(?:[×xX*·]|\\times) ?10 ?(?:\^|\*\*) ?([+-]?\d+)))?$/;

  function parseNumber(raw) {
    var typed = String(raw).trim();
    var s = typed
      .replace(/[\u2212\u2012\u2013\uFE63\uFF0D]/g, "-") // minus signs and dashes
      .replace(/\s+/g, " "); // no-break and thin spaces too
    // quote what was typed, but not a whole pasted page
    var shown = "“" + (typed.length > ECHO_LIMIT ? typed.slice(0, ECHO_LIMIT) + "…" : typed) + "”";
    if (s === "") return { error: "Type a number first." };
    var fraction = /^([^/]*?) ?\/ ?([^/]*)$/.exec(s);
    // only something made of number characters on both sides is read as a
    // fraction; "<b>x</b>" or "a/b" is simply not a number
    if (fraction && NUMBERISH.test(fraction[1]) && NUMBERISH.test(fraction[2])) {
      var top = parseNumber(fraction[1]), bottom = parseNumber(fraction[2]);
      if (top.error || bottom.error || /^[+-]/.test(fraction[2])) {
        return { error: "Could not read " + shown + " as a fraction: write it as a/b, for example 1/256." };
      }
      if (bottom.value === 0) return { error: "Could not read " + shown + ": it divides by zero." };
      return { value: top.value / bottom.value };
    }
    var m = NUMBER.exec(s);
    var body = m ? unsignedDecimal(m[2]) : { error: "" };
    if (body.ambiguous) return { error: "Not graded: " + shown + " " + body.ambiguous };
    if (body.error !== undefined) {
      return {
        error: "Could not read " + shown + " as a number" + (body.error ? ": " + body.error : "") +
          ". Write a decimal with a point or a comma (0.6 or 0,6), a fraction (1/256) or e-notation (3.9e-3).",
      };
    }
    var exponent = m[3] !== undefined ? m[3] : m[4];
    var value = Number((m[1] === "-" ? "-" : "") + body.text + (exponent !== undefined ? "e" + exponent : ""));
    if (!isFinite(value)) return { error: "Could not read " + shown + ": the number is too large." };
    return { value: value };
  }

  // ---- quiz state --------------------------------------------------------
  function pageRecord(page, total) {
    var rec = store.get("quiz:" + page, null) || { answers: {} };
    rec.answers = rec.answers || {};
    if (total) rec.total = total;
    return rec;
  }

  function saveRecord(page, rec) {
    var ids = Object.keys(rec.answers);
    rec.answered = ids.length;
    rec.correct = ids.filter(function (id) {
      return rec.answers[id].correct;
    }).length;
    store.set("quiz:" + page, rec);
  }

  function queue() {
    var q = store.get("practice", []);
    return Array.isArray(q) ? q : [];
  }

  function setQueued(page, qid, wanted) {
    var q = queue().filter(function (item) {
      return !(item.page === page && item.qid === qid);
    });
    if (wanted) q.push({ page: page, qid: qid, added: Date.now() });
    store.set("practice", q);
  }

  function isQueued(page, qid) {
    return queue().some(function (item) {
      return item.page === page && item.qid === qid;
    });
  }

  // ---- one question ------------------------------------------------------
  function numberInput(form) {
    return form.querySelector(".mfl-quiz-num input");
  }

  // {value, raw} for an answer that was understood, or {error}: never graded.
  function readAnswer(form) {
    if (form.dataset.type === "numeric") {
      var raw = numberInput(form).value.trim();
      var parsed = parseNumber(raw);
      return parsed.error ? { error: parsed.error } : { value: String(parsed.value), raw: raw };
    }
    var checked = form.querySelector('input[type="radio"]:checked');
    return checked ? { value: checked.value } : { error: "Choose an option first." };
  }

  function isCorrect(form, value) {
    if (form.dataset.type === "numeric") {
      var tol = Number(form.dataset.tolerance);
      return Math.abs(Number(value) - Number(form.dataset.answer)) <= tol + 1e-12 * Math.max(1, Math.abs(tol));
    }
    return value === String(form.dataset.answer);
  }

  function optionText(form, index) {
    var label = form.querySelector('label[for="' + form.id + "-" + index + '"]');
    if (!label) return String(index);
    // KaTeX keeps a hidden MathML copy of each formula; read only what is shown.
    var copy = label.cloneNode(true);
    copy.querySelectorAll(".katex-mathml").forEach(function (n) { n.remove(); });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  function clearMarks(form) {
    form.querySelectorAll(".mfl-quiz-mark").forEach(function (m) {
      m.remove();
    });
    form.querySelectorAll(".mfl-quiz-opt").forEach(function (o) {
      o.classList.remove("is-correct", "is-wrong");
    });
    form.classList.remove("is-correct", "is-wrong", "is-unread");
  }

  // Show the outcome of `value` (already judged; `raw` as typed) without touching storage.
  function showOutcome(form, value, correct, note, raw) {
    clearMarks(form);
    form.classList.add(correct ? "is-correct" : "is-wrong");
    var feedback = form.querySelector(".mfl-quiz-feedback");
    var text;
    if (form.dataset.type === "numeric") {
      var tol = Number(form.dataset.tolerance);
      var mine = formatNumber(value);
      // say how a typed "0,6" or "1/256" was read
      if (raw && raw !== mine && raw !== String(value)) mine = "“" + raw + "” (read as " + mine + ")";
      var expected = formatNumber(form.dataset.answer);
      if (tol === 0) {
        text = correct
          ? "Correct: " + mine + " is exactly right."
          : "Not quite: you answered " + mine + "; the expected answer is exactly " + expected + ".";
      } else {
        text = correct
          ? "Correct: " + mine + " is within ±" + formatNumber(tol) + " of " + expected + "."
          : "Not quite: you answered " + mine + "; the expected answer is " + expected + " (±" + formatNumber(tol) + ").";
      }
    } else {
      var right = form.dataset.answer;
      form.querySelectorAll(".mfl-quiz-opt").forEach(function (opt) {
        var input = opt.querySelector("input");
        if (input.value === right) {
          opt.classList.add("is-correct");
          opt.appendChild(el("span", { className: "mfl-quiz-mark", text: " ✓ correct answer" }));
        } else if (input.value === value) {
          opt.classList.add("is-wrong");
          opt.appendChild(el("span", { className: "mfl-quiz-mark", text: " ✗ your answer" }));
        }
      });
      text = correct ? "Correct." : "Not quite: the right answer is “" + optionText(form, right) + "”.";
    }
    feedback.textContent = (correct ? "✓ " : "✗ ") + text + (note ? " " + note : "");
    var explain = form.querySelector(".mfl-quiz-explain");
    if (explain) explain.hidden = false;
  }

  function updateScore(section) {
    if (!section) return;
    var page = section.dataset.page;
    var total = Number(section.dataset.total);
    var rec = pageRecord(page, total);
    saveRecord(page, rec);
    var line = section.querySelector(".mfl-quiz-score");
    if (!line) return;
    line.textContent = rec.answered
      ? "Your score: " + rec.correct + " of " + total + " correct (" + rec.answered + " of " + total +
        " answered). Kept only in this browser."
      : total + " questions. Your answers and score are kept only in this browser.";
  }

  function setupQuestion(form, options) {
    if (form.dataset.mflReady) return;
    form.dataset.mflReady = "1";
    var page = form.dataset.page;
    var qid = form.dataset.qid;
    var practice = options && options.practice;

    if (!practice) {
      var saved = pageRecord(page).answers[qid];
      if (saved) {
        if (form.dataset.type === "numeric") {
          numberInput(form).value = saved.raw || saved.value;
        } else {
          var radio = form.querySelector('input[type="radio"][value="' + saved.value + '"]');
          if (radio) radio.checked = true;
        }
        showOutcome(form, saved.value, saved.correct, "", saved.raw);
      }
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var answer = readAnswer(form);
      var feedback = form.querySelector(".mfl-quiz-feedback");
      if (answer.error) {
        // not understood: say what was read; nothing is graded, stored or queued
        clearMarks(form);
        form.classList.add("is-unread");
        feedback.textContent = answer.error;
        return;
      }
      var value = answer.value;
      var correct = isCorrect(form, value);
      var note = "";
      var first = practice ? null : pageRecord(page).answers[qid];
      if (first) {
        // The score keeps the first answer: the right one has been shown since,
        // so answering again here changes neither the score nor the queue.
        // The practice queue is where a wrong answer gets its real second try.
        if (!isQueued(page, qid)) note = "Your score keeps your first answer.";
        else if (correct) {
          note = "Your score keeps your first answer, and the question stays in your practice queue " +
            "(its answer was already shown here): answer it on the Practice page to remove it.";
        } else note = "Your score keeps your first answer; the question stays in your practice queue.";
      } else {
        if (!practice) {
          var rec = pageRecord(page, Number(form.dataset.total || 0) || undefined);
          rec.answers[qid] = { value: value, correct: correct, at: Date.now() };
          if (answer.raw !== undefined) rec.answers[qid].raw = answer.raw;
          saveRecord(page, rec);
        }
        var wasQueued = isQueued(page, qid);
        setQueued(page, qid, !correct);
        if (!correct) note = "It is in your practice queue.";
        else if (wasQueued) note = "Removed from your practice queue.";
      }
      showOutcome(form, value, correct, note, answer.raw);
      updateScore(form.closest(".mfl-quiz"));
      if (options && options.onAnswer) options.onAnswer(correct);
    });
  }

  function queuedFrom(page) {
    return queue().filter(function (item) {
      return item.page === page;
    }).length;
  }

  // "Clear my answers" asks first, in the page (no dialog), and says what
  // happens to the practice queue: nothing.
  function confirmClear(section, reset) {
    var page = section.dataset.page;
    var tools = reset.closest(".mfl-quiz-tools") || reset.parentNode;
    var old = section.querySelector(".mfl-quiz-confirm");
    if (old) old.remove();
    var answered = pageRecord(page).answered || Object.keys(pageRecord(page).answers).length;
    var line = section.querySelector(".mfl-quiz-score");
    if (!answered) {
      updateScore(section);
      if (line) line.textContent = "There are no answers to clear on this page. " + line.textContent;
      return;
    }
    var queued = queuedFrom(page);
    var yes = el("button", { type: "button", className: "md-button md-button--primary mfl-quiz-confirm-yes", text: "Clear my answers" });
    var no = el("button", { type: "button", className: "md-button mfl-quiz-confirm-no", text: "Cancel" });
    var box = el("div", { className: "mfl-quiz-confirm", role: "group", "aria-label": "Clear your answers?" }, [
      el("p", {
        text: "Clear " + (answered === 1 ? "your answer" : "your " + answered + " answers") + " on this page, and the score? " +
          "Your next answers will then count as first answers. " +
          (queued
            ? "Your practice queue keeps its " + (queued === 1 ? "question" : queued + " questions") +
              " from this page; a correct answer, here once cleared or on the Practice page, removes " +
              (queued === 1 ? "it" : "a question") + " from the queue."
            : "Your practice queue is not changed."),
      }),
      el("p", { className: "mfl-quiz-confirm-actions" }, [yes, " ", no]),
    ]);
    tools.parentNode.insertBefore(box, tools.nextSibling);
    no.focus();
    no.addEventListener("click", function () {
      box.remove();
      reset.focus();
    });
    yes.addEventListener("click", function () {
      store.remove("quiz:" + page);
      section.querySelectorAll("form.mfl-quiz-q").forEach(function (form) {
        form.reset();
        clearMarks(form);
        form.querySelector(".mfl-quiz-feedback").textContent = "";
        var explain = form.querySelector(".mfl-quiz-explain");
        if (explain) explain.hidden = true;
      });
      box.remove();
      updateScore(section);
      if (line) {
        line.textContent = "Answers cleared" + (queued ? "; your practice queue is unchanged. " : ". ") + line.textContent;
      }
      reset.focus();
    });
  }

  function initQuizzes(root) {
    root.querySelectorAll(".mfl-quiz").forEach(function (section) {
      var total = section.dataset.total;
      section.querySelectorAll("form.mfl-quiz-q").forEach(function (form) {
        form.dataset.total = total;
        setupQuestion(form);
      });
      updateScore(section);
      var reset = section.querySelector(".mfl-quiz-reset");
      if (reset && !reset.dataset.mflReady) {
        reset.dataset.mflReady = "1";
        reset.addEventListener("click", function () {
          confirmClear(section, reset);
        });
      }
    });
  }

  // ---- notes ---------------------------------------------------------------
  // A debounced save still runs after an instant navigation (it keeps its
  // textarea); pendingSave flushes it when the tab is closed or hidden.
  var pendingSave = null;
  window.addEventListener("pagehide", function () {
    if (pendingSave) pendingSave();
  });
  // The panel stays open on the pages where the reader left it open, not on
  // every page (an open panel pushes the lesson down a phone screen).
  function openPanels() {
    var open = store.get("notes-open", {});
    return open && typeof open === "object" && !Array.isArray(open) ? open : {};
  }

  function noteOf(page) {
    var n = store.get("note:" + page, null);
    return n && typeof n.text === "string" ? n : null;
  }

  function exportNotes() {
    var parts = [];
    store.keys("note:").forEach(function (key) {
      var note = store.get(key, null);
      if (!note || !note.text) return;
      var page = key.slice("note:".length);
      parts.push("# " + (note.title || page) + "\n<!-- mfl-page: " + page + " -->\n\n" + note.text.replace(/\s+$/, "") + "\n");
    });
    var header = "<!-- Math for LLMs: private notes exported " + new Date().toISOString().slice(0, 10) + " -->\n\n";
    return { count: parts.length, text: header + parts.join("\n") };
  }

  // Parse the exported format: "# Title" followed by "<!-- mfl-page: path -->".
  function parseNotes(text) {
    var lines = text.replace(/\r\n?/g, "\n").split("\n");
    var notes = [];
    var current = null;
    for (var i = 0; i < lines.length; i++) {
      var marker = i + 1 < lines.length ? /^<!-- mfl-page: (.+?) -->\s*$/.exec(lines[i + 1]) : null;
      if (/^# /.test(lines[i]) && marker) {
        current = { title: lines[i].slice(2).trim(), page: marker[1], lines: [] };
        notes.push(current);
        i++;
      } else if (current) {
        current.lines.push(lines[i]);
      }
    }
    return notes.map(function (n) {
      return { title: n.title, page: n.page, text: n.lines.join("\n").replace(/^\n+/, "").replace(/\s+$/, "") };
    });
  }

  // The pages a note may belong to: the lesson pages in the site's navigation
  // (a page inside a lesson folder, as hooks/reader.py decides), plus this one.
  // An imported note for any other key ("__proto__", "../../etc", a page that
  // no longer exists) is skipped, never stored.
  var SITE_ROOT = (function () {
    try {
      var config = JSON.parse(document.getElementById("__config").textContent);
      return new URL((config.base || ".") + "/", window.location.href).href;
    } catch (e) {
      return null;
    }
  })();

  function notePages(current) {
    var keys = {};
    if (SITE_ROOT) {
      document.querySelectorAll("a.md-nav__link[href]").forEach(function (a) {
        var url = new URL(a.getAttribute("href"), window.location.href);
        url.hash = "";
        url.search = "";
        if (url.href.indexOf(SITE_ROOT) === 0) keys[url.href.slice(SITE_ROOT.length)] = true;
      });
    }
    var folders = {};
    Object.keys(keys).forEach(function (k) {
      var m = /^([a-z0-9-]+)\/[a-z0-9-]+(?:\/|\.html)$/.exec(k); // ".html": the offline copy
      if (m && m[1] !== "reference") folders[m[1]] = true;
    });
    var known = {};
    Object.keys(keys).forEach(function (k) {
      var m = /^([a-z0-9-]+)\/(?:[a-z0-9-]+(?:\/|\.html))?$/.exec(k);
      if (m && folders[m[1]]) known[k] = true;
    });
    if (current) known[current] = true;
    return known;
  }

  // An export of a full note (8,000 characters) for every lesson page is well
  // under 1 MB; a larger file is not a notes export, and is not read at all.
  var IMPORT_LIMIT = 2 * 1024 * 1024; // bytes

  // Store the notes of an exported file; the result counts what was stored.
  function importNotes(text, known) {
    var result = { added: 0, merged: 0, same: 0, truncated: 0, full: 0, unknown: [], failed: 0, titles: [] };
    parseNotes(text).forEach(function (n) {
      if (!n.text) return;
      if (known && !Object.prototype.hasOwnProperty.call(known, n.page)) {
        result.unknown.push(n.page);
        return;
      }
      var mine = noteOf(n.page);
      var merged, kind;
      if (!mine || !mine.text.trim()) {
        merged = n.text;
        kind = "added";
      } else if (mine.text.indexOf(n.text) !== -1) {
        result.same++;
        return;
      } else {
        merged = mine.text.replace(/\s+$/, "") + "\n\n" + n.text;
        kind = "merged";
      }
      var cut = merged.length > NOTE_LIMIT;
      if (cut) merged = merged.slice(0, NOTE_LIMIT);
      if (mine && merged === mine.text) {
        result.full++; // the note here is already at the limit: nothing of the import fits
        return;
      }
      var ok = store.set("note:" + n.page, {
        title: (mine && mine.title) || n.title.slice(0, 200),
        text: merged,
        updated: Date.now(),
      });
      if (!ok) {
        result.failed++;
        return;
      }
      result[kind]++;
      result.titles.push((mine && mine.title) || n.title.slice(0, 200) || n.page);
      if (cut) result.truncated++;
    });
    return result;
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  function importSummary(r) {
    var stored = r.added + r.merged;
    var parts = [];
    if (stored) {
      // name the pages (the first three): the reader can check where the notes went
      var named = (r.titles || []).slice(0, 3).map(function (t) { return "“" + t.slice(0, 80) + "”"; }).join(", ") +
        ((r.titles || []).length > 3 ? ", …" : "");
      parts.push(
        "Imported notes for " + plural(stored, "page", "pages") + (named ? ": " + named : "") +
          (r.merged ? " (" + r.merged + " merged with existing notes)" : "")
      );
    }
    if (r.same) parts.push(plural(r.same, "page was", "pages were") + " already present");
    if (r.truncated) parts.push(plural(r.truncated, "note was", "notes were") + " cut at 8,000 characters");
    if (r.full) parts.push(plural(r.full, "page's note is", "pages' notes are") + " already full, so nothing was added there");
    if (r.unknown.length) {
      parts.push(
        plural(r.unknown.length, "note was", "notes were") + " skipped: not a page of this course (" +
          r.unknown.slice(0, 3).map(function (k) { return "“" + k.slice(0, 60) + "”"; }).join(", ") +
          (r.unknown.length > 3 ? ", …" : "") + ")"
      );
    }
    if (r.failed) parts.push(plural(r.failed, "note", "notes") + " could not be saved: this browser's storage is full or disabled");
    if (!parts.length) return "No notes found in that file (expected the format that “Export all notes” writes).";
    if (!stored) parts[0] = "Nothing was imported: " + parts[0];
    return parts.join("; ") + ".";
  }

  function download(name, text) {
    var blob = new Blob([text], { type: "text/markdown;charset=utf-8" });
    var url = URL.createObjectURL(blob);
    var a = el("a", { href: url, download: name });
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () {
      URL.revokeObjectURL(url);
      a.remove();
    }, 1000);
  }

  function initNotes(reader) {
    var panel = reader.querySelector(".mfl-notes");
    if (!panel || panel.dataset.mflReady) return;
    panel.dataset.mflReady = "1";
    var page = reader.dataset.page;
    var title = reader.dataset.title;
    var area = panel.querySelector("textarea");
    var count = panel.querySelector(".mfl-notes-count");
    var status = panel.querySelector(".mfl-notes-status");
    var file = panel.querySelector(".mfl-notes-file");
    var timer = null;

    function showCount() {
      count.textContent = formatNumber(area.value.length) + " / " + formatNumber(NOTE_LIMIT) + " characters";
      count.classList.toggle("is-full", area.value.length >= NOTE_LIMIT);
    }
    function save() {
      clearTimeout(timer);
      timer = null;
      var text = area.value.slice(0, NOTE_LIMIT);
      var ok = text ? store.set("note:" + page, { title: title, text: text, updated: Date.now() }) : (store.remove("note:" + page), true);
      status.textContent = ok ? "Saved in this browser." : "Could not save: this browser's storage is full or disabled.";
    }
    function load() {
      var note = noteOf(page);
      area.value = note ? note.text : "";
      showCount();
      panel.open = !!openPanels()[page];
    }

    load();
    panel.hidden = false;
    area.addEventListener("input", function () {
      showCount();
      status.textContent = "Saving…";
      clearTimeout(timer);
      timer = setTimeout(save, 400);
    });
    area.addEventListener("blur", function () {
      if (timer) save();
    });
    pendingSave = function () {
      if (timer) save();
    };
    panel.addEventListener("toggle", function () {
      var open = openPanels();
      if (panel.open) open[page] = true;
      else delete open[page];
      store.set("notes-open", open);
    });
    panel.querySelector(".mfl-notes-export").addEventListener("click", function () {
      if (timer) save();
      var out = exportNotes();
      if (!out.count) {
        status.textContent = "No notes to export yet.";
        return;
      }
      download("math-for-llms-notes.md", out.text);
      status.textContent = "Exported " + out.count + (out.count === 1 ? " page" : " pages") + " of notes.";
    });
    panel.querySelector(".mfl-notes-import").addEventListener("click", function () {
      file.click();
    });
    // Delete this page's note; one Undo brings it back (until the next edit).
    var undo = panel.querySelector(".mfl-notes-undo");
    var deleted = null;
    var remove = panel.querySelector(".mfl-notes-delete");
    if (remove && undo) {
      remove.addEventListener("click", function () {
        clearTimeout(timer);
        timer = null;
        var note = noteOf(page);
        if (!note && !area.value) {
          status.textContent = "There is no note on this page to delete.";
          return;
        }
        deleted = note ? note.text : area.value;
        store.remove("note:" + page);
        area.value = "";
        showCount();
        undo.hidden = false;
        status.textContent = "Note deleted from this browser.";
        undo.focus();
      });
      undo.addEventListener("click", function () {
        if (deleted === null) return;
        area.value = deleted;
        deleted = null;
        save();
        showCount();
        undo.hidden = true;
        status.textContent = "Note restored and saved in this browser.";
        area.focus();
      });
      area.addEventListener("input", function () {
        deleted = null;
        undo.hidden = true;
      });
    }
    file.addEventListener("change", function () {
      var f = file.files && file.files[0];
      if (!f) return;
      if (f.size > IMPORT_LIMIT) {
        file.value = "";
        status.textContent = "Nothing was imported: that file is " + formatNumber(Math.ceil(f.size / 1024)) +
          " KB, too large for a notes export (files up to " + formatNumber(IMPORT_LIMIT / 1024) + " KB are read).";
        return;
      }
      f.text().then(function (text) {
        if (timer) save();
        var r = importNotes(text, notePages(page));
        file.value = "";
        load();
        status.textContent = importSummary(r);
      });
    });
  }

  // ---- visited pages and the lesson overview ----------------------------
  function markVisited(page) {
    var visited = store.get("visited", {}) || {};
    visited[page] = Date.now();
    store.set("visited", visited);
  }

  function initProgress(root) {
    root.querySelectorAll(".mfl-progress").forEach(function (box) {
      var visited = store.get("visited", {}) || {};
      var pages = 0, seen = 0, correct = 0, total = 0;
      box.querySelectorAll("tr[data-page]").forEach(function (row) {
        var page = row.dataset.page;
        var rowTotal = Number(row.dataset.total);
        pages++;
        var v = row.querySelector(".mfl-visited");
        v.textContent = "";
        if (visited[page]) {
          seen++;
          v.appendChild(el("span", { "aria-hidden": "true", text: "✓" }));
          v.appendChild(el("span", { className: "mfl-sr-only", text: "visited" }));
        } else {
          v.appendChild(el("span", { "aria-hidden": "true", text: "–" }));
          v.appendChild(el("span", { className: "mfl-sr-only", text: "not yet" }));
        }
        if (rowTotal) {
          total += rowTotal;
          var rec = store.get("quiz:" + page, null);
          var s = row.querySelector(".mfl-score");
          if (rec && rec.answered) {
            correct += rec.correct;
            s.textContent = rec.correct + " / " + rowTotal + " correct" + (rec.answered < rowTotal ? " (" + rec.answered + " answered)" : "");
          } else {
            s.textContent = "not started";
          }
        }
      });
      // This lesson's share of the practice queue (the queue spans every lesson).
      var lesson = (box.dataset.lesson || "").replace(/\/$/, "") + "/";
      var queued = queue().filter(function (item) { return item.page.indexOf(lesson) === 0; }).length;
      var compact = box.classList.contains("mfl-progress-compact");
      var summary = box.querySelector(".mfl-progress-summary");
      summary.textContent = "Visited " + seen + " of " + pages + " pages · " + correct + " of " + total +
        " skill-check questions correct · " + queued + (queued === 1 ? " question" : " questions") +
        " in your practice queue." + (compact ? "" : " Read from this browser's storage; nothing is sent anywhere.");
    });
  }

  // ---- practice page -----------------------------------------------------
  // {<page>: {title, total, questions: {qid: "<form ...>"}}}, written into the
  // Practice page at build time by hooks/quiz.py.
  function own(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key);
  }

  function practiceBank(box) {
    var script = box.querySelector("script.mfl-practice-bank");
    try {
      return JSON.parse(script.textContent) || {};
    } catch (e) {
      return {};
    }
  }

  function typeset(node) {
    if (typeof renderMathInElement === "function") {
      renderMathInElement(node, { delimiters: MATH_DELIMITERS, throwOnError: false });
    }
  }

  function initPractice(root) {
    var box = root.querySelector(".mfl-practice");
    if (!box || box.dataset.mflReady) return;
    box.dataset.mflReady = "1";
    var siteRoot = new URL(box.dataset.root || "./", window.location.href);
    var items = queue();
    var bank = practiceBank(box);
    var pages = box.querySelector(".mfl-practice-pages"); // built by hooks/quiz.py
    box.textContent = "";
    var status = el("p", { className: "mfl-practice-status", role: "status" });
    box.appendChild(status);
    var list = el("div", { className: "mfl-practice-list" });
    box.appendChild(list);

    function refreshStatus() {
      var n = queue().length;
      status.textContent = n
        ? n + (n === 1 ? " question" : " questions") + " to practice. A correct answer removes a question from the queue."
        : "Your practice queue is empty.";
    }
    function showEmpty() {
      var empty = el("div", { className: "mfl-practice-empty" }, [
        el("p", { text: "When you answer a skill-check question wrongly, it waits here until you answer it correctly." }),
      ]);
      if (pages) {
        pages.hidden = false;
        empty.appendChild(pages);
      }
      list.appendChild(empty);
    }
    refreshStatus();
    if (!items.length) {
      showEmpty();
      return;
    }
    // By page in course order, and within a page in question order (the bank
    // lists both in that order), not in the order the questions were missed.
    var pageOrder = Object.keys(bank);
    function rank(item) {
      var p = pageOrder.indexOf(item.page);
      var qs = p === -1 || !own(bank[item.page], "questions") ? [] : Object.keys(bank[item.page].questions);
      return [p === -1 ? pageOrder.length : p, qs.indexOf(item.qid)];
    }
    items = items.slice().sort(function (a, b) {
      var x = rank(a), y = rank(b);
      return x[0] - y[0] || x[1] - y[1];
    });
    var lastPage = null;
    items.forEach(function (item) {
      var pageUrl = new URL(item.page, siteRoot).href;
      if (item.page !== lastPage) {
        lastPage = item.page;
        var heading = own(bank, item.page) ? bank[item.page].title : item.page;
        list.appendChild(el("h2", { className: "mfl-practice-page", "data-page": item.page }, [
          el("a", { href: pageUrl, text: heading }),
        ]));
      }
      var card = el("article", { className: "mfl-practice-item", "data-page": item.page, "data-qid": item.qid });
      list.appendChild(card);
      var source = own(bank, item.page) ? bank[item.page] : null;
      var title = source ? source.title : item.page;
      var number = rank(item)[1] + 1;
      // "Question 4 · §3 Scaled Dot-Product Attention": the page's section
      // number as §3, never "Question 4 of 3. ...", which reads as a count.
      var where = title.replace(/^(\d+)\.\s+/, "§$1 ");
      card.appendChild(el("p", { className: "mfl-practice-from" }, [
        el("a", { href: pageUrl + "#q-" + item.qid, text: number ? "Question " + number + " · " + where : title }),
      ]));
      var html = source && own(source.questions, item.qid) ? source.questions[item.qid] : null;
      if (!html) {
        card.appendChild(el("p", { text: "This question is no longer on its page, so it has been removed from your queue." }));
        setQueued(item.page, item.qid, false);
        refreshStatus();
        return;
      }
      // The site's own markup, built with the site; never user text.
      var form = new DOMParser().parseFromString(html, "text/html").querySelector("form.mfl-quiz-q");
      var copy = document.importNode(form, true);
      // its links and images are relative to its lesson page
      copy.querySelectorAll("a[href]").forEach(function (a) {
        a.setAttribute("href", new URL(a.getAttribute("href"), pageUrl).href);
      });
      copy.querySelectorAll("img[src]").forEach(function (img) {
        img.setAttribute("src", new URL(img.getAttribute("src"), pageUrl).href);
      });
      copy.dataset.total = source.total;
      card.appendChild(copy);
      typeset(copy);
      setupQuestion(copy, {
        practice: true,
        onAnswer: function () {
          refreshStatus();
        },
      });
    });
  }

  // ---- entry point (first load and every instant navigation) ------------
  function init() {
    var content = document.querySelector("article") || document.body;
    var reader = content.querySelector(".mfl-reader");
    if (reader) {
      markVisited(reader.dataset.page);
      initNotes(reader);
    }
    initQuizzes(content);
    initProgress(content);
    initPractice(content);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  } else {
    document.addEventListener("DOMContentLoaded", init);
  }

  // For tests and curious readers: window.mflReader.exportNotes() etc.
  window.mflReader = { exportNotes: exportNotes, parseNotes: parseNotes, importNotes: importNotes };
})();
