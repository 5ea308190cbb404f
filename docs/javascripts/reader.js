// Reader features: skill checks, practice queue, private notes, progress.
//
// Everything is kept in this browser's localStorage under keys that start
// with "mfl:"; nothing is sent anywhere. The only network requests this file
// makes are same-origin fetches of lesson pages, on the Practice page, to
// show a queued question from its single source (its lesson page).
//
//   mfl:quiz:<page>  {answered, correct, total, answers: {qid: {value, correct, at}}}
//   mfl:practice     [{page, qid, added}]          questions answered wrongly
//   mfl:visited      {<page>: timestamp}            lesson pages opened
//   mfl:note:<page>  {title, text, updated}         private notes
//
// <page> is the page's site-relative URL, e.g. "embedding-space-math/intuition/".
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
    return Number(n).toLocaleString("en-US", { maximumFractionDigits: 10 });
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
  function readAnswer(form) {
    if (form.dataset.type === "numeric") {
      var input = form.querySelector('input[type="number"]');
      var raw = input.value.trim();
      var value = input.valueAsNumber;
      if (raw === "" || !isFinite(value)) return null;
      return String(value);
    }
    var checked = form.querySelector('input[type="radio"]:checked');
    return checked ? checked.value : null;
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
    return label ? label.textContent.trim() : String(index);
  }

  function clearMarks(form) {
    form.querySelectorAll(".mfl-quiz-mark").forEach(function (m) {
      m.remove();
    });
    form.querySelectorAll(".mfl-quiz-opt").forEach(function (o) {
      o.classList.remove("is-correct", "is-wrong");
    });
    form.classList.remove("is-correct", "is-wrong");
  }

  // Show the outcome of `value` (already judged) without touching storage.
  function showOutcome(form, value, correct, note) {
    clearMarks(form);
    form.classList.add(correct ? "is-correct" : "is-wrong");
    var feedback = form.querySelector(".mfl-quiz-feedback");
    var text;
    if (form.dataset.type === "numeric") {
      var tol = Number(form.dataset.tolerance);
      text = correct
        ? "Correct: " + formatNumber(value) + " is within ±" + formatNumber(tol) + " of " + formatNumber(form.dataset.answer) + "."
        : "Not quite: you answered " + formatNumber(value) + "; the expected answer is " + formatNumber(form.dataset.answer) +
          " (±" + formatNumber(tol) + ").";
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
          form.querySelector('input[type="number"]').value = saved.value;
        } else {
          var radio = form.querySelector('input[type="radio"][value="' + saved.value + '"]');
          if (radio) radio.checked = true;
        }
        showOutcome(form, saved.value, saved.correct);
      }
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var value = readAnswer(form);
      var feedback = form.querySelector(".mfl-quiz-feedback");
      if (value === null) {
        clearMarks(form);
        feedback.textContent = form.dataset.type === "numeric" ? "Type a number first." : "Choose an option first.";
        return;
      }
      var correct = isCorrect(form, value);
      var rec = pageRecord(page, Number(form.dataset.total || 0) || undefined);
      rec.answers[qid] = { value: value, correct: correct, at: Date.now() };
      saveRecord(page, rec);
      var wasQueued = isQueued(page, qid);
      setQueued(page, qid, !correct);
      var note = "";
      if (!correct) note = "It is in your practice queue.";
      else if (wasQueued) note = "Removed from your practice queue.";
      showOutcome(form, value, correct, note);
      updateScore(form.closest(".mfl-quiz"));
      if (options && options.onAnswer) options.onAnswer(correct);
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
          store.remove("quiz:" + section.dataset.page);
          section.querySelectorAll("form.mfl-quiz-q").forEach(function (form) {
            form.reset();
            clearMarks(form);
            form.querySelector(".mfl-quiz-feedback").textContent = "";
            var explain = form.querySelector(".mfl-quiz-explain");
            if (explain) explain.hidden = true;
          });
          updateScore(section);
          var line = section.querySelector(".mfl-quiz-score");
          if (line) line.textContent = "Answers cleared. " + line.textContent;
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

  function importNotes(text) {
    var result = { added: 0, merged: 0, same: 0, truncated: 0 };
    parseNotes(text).forEach(function (n) {
      if (!n.text) return;
      var mine = noteOf(n.page);
      var merged;
      if (!mine || !mine.text.trim()) {
        merged = n.text;
        result.added++;
      } else if (mine.text.indexOf(n.text) !== -1) {
        result.same++;
        return;
      } else {
        merged = mine.text.replace(/\s+$/, "") + "\n\n" + n.text;
        result.merged++;
      }
      if (merged.length > NOTE_LIMIT) {
        merged = merged.slice(0, NOTE_LIMIT);
        result.truncated++;
      }
      store.set("note:" + n.page, { title: (mine && mine.title) || n.title, text: merged, updated: Date.now() });
    });
    return result;
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
      panel.open = !!store.get("notes-open", false);
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
      store.set("notes-open", panel.open);
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
    file.addEventListener("change", function () {
      var f = file.files && file.files[0];
      if (!f) return;
      f.text().then(function (text) {
        if (timer) save();
        var r = importNotes(text);
        file.value = "";
        load();
        var found = r.added + r.merged + r.same;
        status.textContent = found
          ? "Imported notes for " + (r.added + r.merged) + (r.added + r.merged === 1 ? " page" : " pages") +
            (r.merged ? " (" + r.merged + " merged with existing notes)" : "") +
            (r.same ? "; " + r.same + " already present" : "") +
            (r.truncated ? "; " + r.truncated + " cut at 8,000 characters" : "") + "."
          : "No notes found in that file (expected the format that “Export all notes” writes).";
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
      var queued = queue().length;
      var summary = box.querySelector(".mfl-progress-summary");
      summary.textContent = "Visited " + seen + " of " + pages + " pages · " + correct + " of " + total +
        " skill-check questions correct · " + queued + (queued === 1 ? " question" : " questions") +
        " in your practice queue. Read from this browser's storage; nothing is sent anywhere.";
    });
  }

  // ---- practice page -----------------------------------------------------
  function fetchPage(url, cache) {
    if (!cache[url]) {
      cache[url] = fetch(url, { credentials: "same-origin" })
        .then(function (r) {
          if (!r.ok) throw new Error(r.status + " " + url);
          return r.text();
        })
        .then(function (text) {
          return new DOMParser().parseFromString(text, "text/html");
        });
    }
    return cache[url];
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
    box.textContent = "";
    var status = el("p", { className: "mfl-practice-status", role: "status" });
    box.appendChild(status);
    var list = el("div", { className: "mfl-practice-list" });
    box.appendChild(list);

    function refreshStatus() {
      var n = queue().length;
      status.textContent = n
        ? n + (n === 1 ? " question" : " questions") + " to practise. A correct answer removes a question from the queue."
        : "Your practice queue is empty.";
    }
    function showEmpty() {
      list.appendChild(el("div", { className: "mfl-practice-empty" }, [
        el("p", { text: "When you answer a skill-check question wrongly on a lesson page, it is added here so that you can retry it later. A correct retry removes it. The queue is kept only in this browser." }),
        el("p", { text: "Each lesson page ends with a “Skill check” section." }),
      ]));
    }
    refreshStatus();
    if (!items.length) {
      showEmpty();
      return;
    }
    var cache = {};
    items.forEach(function (item) {
      var pageUrl = new URL(item.page, siteRoot).href;
      var card = el("article", { className: "mfl-practice-item", "data-page": item.page, "data-qid": item.qid });
      list.appendChild(card);
      card.appendChild(el("p", { className: "mfl-practice-loading", text: "Loading question…" }));
      fetchPage(pageUrl, cache)
        .then(function (doc) {
          var form = doc.querySelector('form.mfl-quiz-q[data-qid="' + CSS.escape(item.qid) + '"]');
          card.textContent = "";
          var h1 = doc.querySelector("article h1");
          var title = h1 ? h1.textContent.replace(/¶/g, "").trim() : item.page;
          var from = el("p", { className: "mfl-practice-from" }, ["From ", el("a", { href: pageUrl + "#q-" + item.qid, text: title })]);
          card.appendChild(from);
          if (!form) {
            card.appendChild(el("p", { text: "This question is no longer on its page, so it has been removed from your queue." }));
            setQueued(item.page, item.qid, false);
            refreshStatus();
            return;
          }
          var copy = document.importNode(form, true);
          copy.querySelectorAll("a[href]").forEach(function (a) {
            a.setAttribute("href", new URL(a.getAttribute("href"), pageUrl).href);
          });
          copy.querySelectorAll("img[src]").forEach(function (img) {
            img.setAttribute("src", new URL(img.getAttribute("src"), pageUrl).href);
          });
          var section = doc.querySelector('.mfl-quiz[data-page="' + CSS.escape(item.page) + '"]');
          copy.dataset.total = section ? section.dataset.total : "";
          card.appendChild(copy);
          typeset(copy);
          setupQuestion(copy, {
            practice: true,
            onAnswer: function () {
              refreshStatus();
            },
          });
        })
        .catch(function () {
          card.textContent = "";
          card.appendChild(el("p", { text: "Could not load this question from " + item.page + "." }));
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
