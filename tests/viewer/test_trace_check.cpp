// Traces are untrusted input: the reproducers of what a crafted trace did to the viewer, each now refused with one
// clear error or shown safely. A uop that is its own source (the stepper looped, growing 0.5 GB/s), a 70 MB
// one-line kernel source (the Source pane crashed), wrong types and missing keys (loaded as defaults), "version":
// 1.0 (accepted), a trace's `script` field (any local file went into the editor, and Run ran it without asking),
// and the signed overflows UBSan found (the stepper's first replayed id, the contexts model's match-count sums).
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <climits>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "viewer/model/contexts_model.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/stepper_model.h"
#include "viewer/model/trace_check.h"
#include "viewer/panes/source_pane.h"

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;

QJsonObject fixture() {  // tutorial.py recorded with --trace matches: 5 contexts, the kernel E_4 is context 3
  QFile f(source_dir() + "/tests/viewer/data/tutorial_matches.trace.json");
  return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}
QByteArray bytes(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }
QString load_error(const QByteArray& b) {
  tsv::Session s;
  QString err;
  return s.load_data(b, &err) ? QString() : err;
}
// the fixture with one uop's fields replaced
QJsonObject with_uop(QJsonObject doc, const QString& id, const QJsonObject& fields) {
  QJsonObject uops = doc["uops"].toObject();
  QJsonObject u = uops[id].toObject();
  for (auto it = fields.begin(); it != fields.end(); ++it) u[it.key()] = it.value();
  uops[id] = u;
  doc["uops"] = uops;
  return doc;
}
QJsonObject with_program_src(QJsonObject doc, const QString& src) {
  QJsonArray ctxs = doc["contexts"].toArray();
  QJsonObject k = ctxs[3].toObject(), p = k["program"].toObject();
  p["src"] = src;
  k["program"] = p;
  ctxs[3] = k;
  doc["contexts"] = ctxs;
  return doc;
}
}  // namespace

class TestTraceCheck : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  QString write(const QString& name, const QByteArray& data) {
    const QString path = dir_.filePath(name);
    ts_test::write_file(path, data);  // (a path that cannot be written fails the test that reads it)
    return path;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tinyscope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_trace_check"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
    QVERIFY(!fixture().isEmpty());
    QCOMPARE(load_error(bytes(fixture())), QString());
  }

  void version_is_the_integer_1() {
    QByteArray b = bytes(fixture());
    const qsizetype at = b.lastIndexOf("\"version\":1");
    QVERIFY(at >= 0);
    const QList<QPair<QByteArray, QString>> cases = {
        {"1.0", "version: expected the integer 1, found 1.0"},  // the reproducer: read as 1 and accepted
        {"1e0", "version: expected the integer 1, found 1e0"},
        {"\"1\"", "version: expected the integer 1, found the string \"1\""},
        {"2", "version: trace schema version 2, this viewer reads version 1"},
        {"null", "version: expected the integer 1, found null"}};
    for (const auto& [text, message] : cases) {
      QByteArray v = b;
      v.replace(at, 11, "\"version\":" + text);
      QCOMPARE(load_error(v), message);
    }
    QJsonObject none = fixture();
    none.remove("version");
    QCOMPARE(load_error(bytes(none)), QStringLiteral("no schema version (the key \"version\" is missing)"));
  }

  // the limits: a file over the size limit is not even read; too many values, too deep a nesting are refused
  void limits_are_errors_that_name_them() {
    const QString big = write("big.json", bytes(with_program_src(fixture(), QString(2 << 20, 'x'))));
    qputenv("TINYSCOPE_MAX_TRACE_MB", "1");
    tsv::Session s;
    QString err;
    const bool ok = s.load(big, &err);
    qunsetenv("TINYSCOPE_MAX_TRACE_MB");
    QVERIFY(!ok);
    QCOMPARE(err, big + ": the trace is 2.0 MB, the viewer reads traces up to 1.0 MB (TINYSCOPE_MAX_TRACE_MB raises the limit)");
    QVERIFY2(s.load(big, &err), qPrintable(err));  // the default limit, 512 MB
    QJsonDocument doc;
    QVERIFY(!tsv::check_trace(R"({"version": 1, "result": [1, 2, 3, [4, 5]]})", &doc, &err, tsv::TraceLimits{.max_values = 5}));
    QCOMPARE(err, QStringLiteral("some 8 JSON values (the limit is 5)"));  // 2 '[', 1 '{', 5 ',' (of 9 values)
    QVERIFY(!tsv::check_trace(R"({"version": 1, "result": [[[1]]]})", &doc, &err, tsv::TraceLimits{.max_nesting = 3}));
    QCOMPARE(err, QStringLiteral("arrays and objects nested more than 3 deep (at byte 27)"));  // the fourth [, from 0
    QVERIFY(!s.load(dir_.path(), &err));  // a directory
    QCOMPARE(err, QStringLiteral("cannot open %1: not a file").arg(dir_.path()));
  }

  // The reproducers of "262 of 400 mutated traces opened": each now one error naming the place
  void wrong_types_and_missing_keys_are_errors() {
    QJsonObject doc = fixture();
    QJsonArray calls = doc["calls"].toArray();
    QJsonObject c = calls[2].toObject();
    c["seconds"] = "fast";
    calls[2] = c;
    QJsonObject d = doc;
    d["calls"] = calls;
    QCOMPARE(load_error(bytes(d)), QStringLiteral("calls[2].seconds: expected a number, found the string \"fast\""));
    c.remove("seconds");
    c.remove("estimates");
    calls[2] = c;
    d["calls"] = calls;
    QCOMPARE(load_error(bytes(d)), QStringLiteral("calls[2]: the key \"estimates\" is missing"));
    QCOMPARE(load_error(bytes(with_uop(doc, "12", {{"src", QJsonArray{3, "x"}}}))),
             QStringLiteral("uops[\"12\"].src[1]: expected an integer, found the string \"x\""));
    QCOMPARE(load_error(bytes(with_uop(doc, "12", {{"src", QJsonArray{-4}}}))),
             QStringLiteral("uops[\"12\"].src[0]: -4 is out of range (0 to 1073741823)"));
    QCOMPARE(load_error(bytes(with_uop(doc, "12", {{"src", QJsonArray{777}}}))),
             QStringLiteral("uops[\"12\"].src[0]: uop 777 is not in the trace"));
    QJsonArray ctxs = doc["contexts"].toArray();
    QJsonObject k = ctxs[3].toObject();
    QJsonArray passes = k["passes"].toArray();
    QJsonObject p = passes[0].toObject();
    p["before"] = 1e20;
    passes[0] = p;
    k["passes"] = passes;
    ctxs[3] = k;
    d = doc;
    d["contexts"] = ctxs;
    QCOMPARE(load_error(bytes(d)), QStringLiteral("contexts[3].passes[0].before: 1e+20 is out of range (0 to 1073741823)"));
    QCOMPARE(load_error("{\"version\": 1, \"contexts\": [], \"calls\": []"), QStringLiteral("not valid JSON: unterminated object at byte 42"));
    // what the trace says is quoted on one line, its control characters (a terminal's escapes) written out
    ctxs = doc["contexts"].toArray();
    k = ctxs[0].toObject();
    k["kind"] = "\x1b[2J\nschedule";
    ctxs[0] = k;
    d = doc;
    d["contexts"] = ctxs;
    QCOMPARE(load_error(bytes(d)), QStringLiteral("contexts[0].kind: expected \"schedule\" or \"kernel\", found the string \"\\x1b[2J\\x0aschedule\""));
    // the rules table: each entry's keys and types, checked like the rest
    d = doc;
    QJsonObject rule{{"name", "x*1 -> x"}, {"file", "engine/uop/symbolic.cpp"}, {"line", 345}, {"first_line", 343}, {"text", "a\nb"}};
    d["rules"] = QJsonArray{rule};
    {
      tsv::Session ok;
      QVERIFY(ok.load_data(bytes(d)));
      QCOMPARE(ok.rules().size(), 1);
      QVERIFY(ok.rule_info("x*1 -> x", "engine/uop/symbolic.cpp:345"));
      QCOMPARE(ok.rule_info("x*1 -> x", "engine/uop/symbolic.cpp:345")->first_line, 343);
      QVERIFY(!ok.rule_info("x*1 -> x", "engine/uop/symbolic.cpp:34"));
    }
    rule["line"] = -2;
    d["rules"] = QJsonArray{rule};
    QCOMPARE(load_error(bytes(d)), QStringLiteral("rules[0].line: -2 is out of range (0 to 2147483647)"));
    rule.remove("line");
    rule.remove("text");
    d["rules"] = QJsonArray{rule};
    QCOMPARE(load_error(bytes(d)), QStringLiteral("rules[0]: the key \"line\" is missing"));
    d["rules"] = QJsonObject{};
    QCOMPARE(load_error(bytes(d)), QStringLiteral("rules: expected an array, found an object"));
    // and the old data stays when a load fails
    tsv::Session s;
    QVERIFY(s.load_data(bytes(doc)));
    QVERIFY(!s.load_data(bytes(d)));
    QCOMPARE(s.contexts().size(), 5);
  }

  // shapes and global sizes are 64-bit, as the engine's: a reduce over 2^33 elements (tests/corpus/32_split_reduce.py)
  // records a shape of 8590000127, which a 32-bit check refused and a 32-bit read turned into 0
  void shapes_and_global_sizes_are_64_bit() {
    QJsonObject doc = with_uop(fixture(), "12", {{"shape", QJsonArray{qint64(8590000127)}}});
    QJsonArray calls = doc["calls"].toArray();
    QJsonObject c = calls[2].toObject();
    c["global_size"] = QJsonArray{qint64(1) << 40, 1, 1};
    calls[2] = c;
    doc["calls"] = calls;
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(bytes(doc), &err), qPrintable(err));
    QCOMPARE(s.uop(12)->shape, QList<qint64>{8590000127});
    QCOMPARE(s.calls()[2].global_size.front(), qint64(1) << 40);
    QCOMPARE(load_error(bytes(with_uop(fixture(), "12", {{"shape", QJsonArray{-1}}}))),
             QStringLiteral("uops[\"12\"].shape[0]: -1 is out of range (0 to 9223372036854775807)"));
  }

  // the reproducer: a uop whose `src` lists itself made the stepper's canonical() loop, growing without bound
  void a_uop_that_is_its_own_source_is_refused() {
    const QJsonObject doc = fixture();
    const int root = doc["contexts"].toArray()[3].toObject()["passes"].toArray()[0].toObject()["before"].toInt();
    QJsonArray src = doc["uops"].toObject()[QString::number(root)].toObject()["src"].toArray();
    src.append(root);
    QElapsedTimer t;
    t.start();
    QCOMPARE(load_error(bytes(with_uop(doc, QString::number(root), {{"src", src}}))),
             QStringLiteral("uops[\"%1\"]: uop %1 lists itself as a source").arg(root));
    // a longer cycle: the root's first source reads the root again
    const int first = src.first().toInt();
    QJsonArray back = doc["uops"].toObject()[QString::number(first)].toObject()["src"].toArray();
    back.append(root);
    const QString err = load_error(bytes(with_uop(doc, QString::number(first), {{"src", back}})));
    QVERIFY2(err.startsWith("uops: the uop graph has a cycle: ") && err.contains(QString::number(root)) &&
                 err.contains(QString::number(first)), qPrintable(err));
    QVERIFY(t.elapsed() < 5000);
  }

  // the reproducer: a 70 MB one-line kernel source crashed SourcePane::show_text (40 MB froze it 34 s). It loads,
  // and the pane shows each line up to its cap, saying so.
  void a_huge_source_line_is_shown_capped() {
    for (qsizetype n : {qsizetype(70'000'000), qsizetype(40'000'000)}) {
      tsv::Session s;
      QString err;
      QVERIFY2(s.load_data(bytes(with_program_src(fixture(), "// " + QString(n, 'x') + "\nvoid E_4() {}\n")), &err), qPrintable(err));
      tsv::SelectionModel sel(&s);
      tsv::SourcePane pane(&sel);
      pane.resize(600, 400);
      pane.show();
      QElapsedTimer t;
      t.start();
      sel.select_context(3);
      pane.grab();  // lays it out and paints
      const qint64 ms = t.elapsed();
      qInfo("%lld-character line: shown in %lld ms", static_cast<long long>(n), static_cast<long long>(ms));
      QVERIFY2(ms < 3000, qPrintable(QString::number(ms)));
      const QStringList lines = pane.text().split('\n');
      QCOMPARE(lines.size(), 3);  // line numbers stay: the cut line, then the rest as it was
      QCOMPARE(lines[0], "// " + QString(tsv::SourcePane::kMaxLineChars - 3, 'x') + " …");
      QCOMPARE(lines[1], QStringLiteral("void E_4() {}"));
      QVERIFY2(pane.title().contains("source cut for display: 1 line cut at 4000 characters"), qPrintable(pane.title()));
    }
    // a source of ordinary lines is shown as it is, with no note
    tsv::Session s;
    QVERIFY(s.load_data(bytes(fixture())));
    tsv::SelectionModel sel(&s);
    tsv::SourcePane pane(&sel);
    sel.select_context(3);
    QCOMPARE(pane.text(), s.contexts()[3].program.src);
    QVERIFY(!pane.title().contains("cut"));
  }

  void the_shown_source_keeps_lines_and_caps_the_total() {
    using tsv::SourcePane;
    // many lines: cut after kMaxShownLines, each kept whole
    QString many;
    for (int i = 0; i < SourcePane::kMaxShownLines + 10; ++i) many += QStringLiteral("line %1\n").arg(i);
    SourcePane::Shown a = SourcePane::displayed(many);
    QVERIFY(a.cut_tail);
    QCOMPARE(a.cut_lines, 0);
    const QStringList la = a.text.split('\n');
    QCOMPARE(la.size(), SourcePane::kMaxShownLines + 1);  // + the closing "…"
    QCOMPARE(la[SourcePane::kMaxShownLines - 1], QStringLiteral("line %1").arg(SourcePane::kMaxShownLines - 1));
    QCOMPARE(la.last(), QStringLiteral("…"));
    // long lines past the total: kMaxShownChars in all
    QString wide;
    for (int i = 0; i < 1000; ++i) wide += QString(5000, QChar('a' + i % 26)) + '\n';
    SourcePane::Shown b = SourcePane::displayed(wide);
    QVERIFY(b.text.size() <= SourcePane::kMaxShownChars + 1000 * 3);
    // each shown line is 4,000 characters, " …" and a newline: 499 of them leave 2,503 characters for the 500th
    const int shown_line = SourcePane::kMaxLineChars + 3;
    QCOMPARE(b.cut_lines, (SourcePane::kMaxShownChars + shown_line - 1) / shown_line);
    QCOMPARE(b.cut_lines, 500);
    QVERIFY(b.cut_tail);
    QVERIFY2(b.note.contains("shown up to line"), qPrintable(b.note));
    QCOMPARE(b.text.split('\n')[1], QString(SourcePane::kMaxLineChars, 'b') + " …");
    // within every limit: untouched
    SourcePane::Shown c = SourcePane::displayed(QStringLiteral("a\n\nb"));
    QCOMPARE(c.text, QStringLiteral("a\n\nb"));
    QVERIFY(c.note.isEmpty());
  }

  // UBSan: the contexts model summed match counts in an int; each count fits one, three of them do not
  void match_count_sums_do_not_overflow() {
    QJsonObject doc = fixture();
    QJsonArray ctxs = doc["contexts"].toArray();
    QJsonObject k = ctxs[2].toObject();  // a schedule with passes that recorded no matches
    QJsonArray passes = k["passes"].toArray();
    QVERIFY(passes.size() >= 3);
    for (int i = 0; i < 3; ++i) {
      QJsonObject p = passes[i].toObject();
      QVERIFY(p["matches"].toArray().isEmpty());
      p["match_count"] = INT_MAX;
      passes[i] = p;
    }
    k["passes"] = passes;
    ctxs[2] = k;
    doc["contexts"] = ctxs;
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(bytes(doc), &err), qPrintable(err));
    tsv::ContextsModel m(&s);
    const QModelIndex row = m.index_of_context(2);
    QCOMPARE(m.index(row.row(), 1, row.parent()).data().toLongLong(), 3LL * INT_MAX);
    QCOMPARE(m.index(0, 1, row).data().toLongLong(), qint64(INT_MAX));
    // the stepper's count of rewrites the trace counted but did not list saturates
    tsv::StepperModel st(&s);
    st.set_context(2);
    QCOMPARE(st.unlisted_matches(), INT_MAX);
  }

  // UBSan: the stepper numbered its replayed nodes from max_id + 1, which overflowed for an id of INT_MAX. Ids are
  // now at most 2^30 - 1, and a trace with that id replays as one without it, its new nodes numbered from 2^30.
  void replayed_nodes_are_numbered_above_the_largest_id() {
    const QJsonObject doc = fixture();
    QJsonObject big = doc;
    QJsonObject uops = big["uops"].toObject();
    uops[QString::number(tsv::TraceLimits{}.max_uop_id)] = QJsonObject{{"op", "NOOP"}, {"dtype", "dtypes.void"}, {"arg", "None"}, {"src", QJsonArray{}}};
    big["uops"] = uops;
    tsv::Session a, b;
    QString err;
    QVERIFY(a.load_data(bytes(doc)));
    QVERIFY2(b.load_data(bytes(big), &err), qPrintable(err));
    int max_id = 0;
    for (auto it = a.uops().keyBegin(); it != a.uops().keyEnd(); ++it) max_id = std::max(max_id, *it);
    tsv::StepperModel ma(&a), mb(&b);
    ma.set_context(3);
    mb.set_context(3);
    QVERIFY(ma.step_count() > 5);
    QCOMPARE(mb.step_count(), ma.step_count());
    int replayed = 0;
    for (int k = 0; k < ma.step_count(); ++k) {
      const auto fa = ma.frame(k), fb = mb.frame(k);
      QCOMPARE(fb.exact, fa.exact);
      // the same graph, the replay's own nodes renumbered from 2^30 instead of from the largest id + 1
      auto renumbered = [&](const QSet<int>& ids) {
        QSet<int> out;
        for (int id : ids) out.insert(ma.is_replay_node(id) ? id - (max_id + 1) + (1 << 30) : id);
        return out;
      };
      const QSet<int> na = ma.nodes_under(fa.after), nb = mb.nodes_under(fb.after);
      QCOMPARE(nb, renumbered(na));
      for (int id : nb) replayed += mb.is_replay_node(id) && id >= (1 << 30);
    }
    QVERIFY(replayed > 0);
    // an id past the limit is refused, not wrapped
    uops[QString::number(INT_MAX)] = uops[QString::number(tsv::TraceLimits{}.max_uop_id)];
    big["uops"] = uops;
    QCOMPARE(load_error(bytes(big)), QStringLiteral("uops[\"2147483647\"]: a uop id must be an integer from 0 to 1073741823"));
  }

  // the reproducer: a trace's `script` field put any local file in the editor, and Run ran it. Now only a .py file
  // opens, marked as the trace's, and Run asks once before running it.
  void run_asks_before_running_a_script_named_by_a_trace() {
    const QString marker = dir_.filePath("ran.txt");
    const QString script = write("from_trace.py", QStringLiteral("open(%1, 'w').write('ran')\nprint('script ran')\n")
                                                      .arg(QString::fromUtf8(QJsonDocument(QJsonArray{marker}).toJson(QJsonDocument::Compact)).mid(1).chopped(1))
                                                      .toUtf8());
    QJsonObject doc = fixture();
    doc["script"] = script;
    const QString trace = write("named.json", bytes(doc));

    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    QStringList asked;
    bool answer = false;
    w.set_run_confirmation([&](const QString& q) {
      asked << q;
      return answer;
    });
    QVERIFY(!w.script_from_trace());  // the tutorial, opened by the window itself
    QVERIFY(w.open_trace(trace));
    QVERIFY(w.script_from_trace());
    QVERIFY(w.editor()->toPlainText().contains("script ran"));
    QVERIFY2(w.windowTitle().contains("from_trace.py (the script named by the trace named.json)"), qPrintable(w.windowTitle()));
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();  // declined: nothing runs
    QCOMPARE(asked.size(), 1);
    QVERIFY2(asked[0].contains(script) && asked[0].contains(trace), qPrintable(asked[0]));
    QCOMPARE(done.size(), 1);
    QVERIFY(!done[0][0].toBool());
    QVERIFY(!w.controller()->running());
    QTest::qWait(200);
    QVERIFY(!QFile::exists(marker));
    QVERIFY(w.script_from_trace());
    answer = true;  // agreed: it runs, and the next Run does not ask again
    w.run();
    QCOMPARE(asked.size(), 2);
    QVERIFY(done.wait(60000));
    QVERIFY2(done.last()[0].toBool(), qPrintable(w.console()->toPlainText()));
    QVERIFY(QFile::exists(marker));
    QVERIFY(!w.script_from_trace());
    w.run();
    QVERIFY(done.wait(60000));
    QCOMPARE(asked.size(), 2);
    // a script the user opens is theirs: no question
    QVERIFY(w.open_trace(trace));
    QVERIFY(w.script_from_trace());
    w.open_script(script);
    QVERIFY(!w.script_from_trace());

    // a trace naming a file that is no .py script: not opened into the editor
    const QString secret = write("secret.txt", "not a script\n");
    doc["script"] = secret;
    const QString other = write("other.json", bytes(doc));
    tsgui::MainWindow w2(source_dir() + "/resources/examples", /*restore_layout=*/false);
    const QString before = w2.editor()->toPlainText();
    QVERIFY(w2.open_trace(other));
    QCOMPARE(w2.editor()->toPlainText(), before);
    QVERIFY(!w2.script_from_trace());
    QVERIFY(w2.console()->toPlainText().contains("The trace names the script " + secret + ": not opened"));
  }

  // one clear error in the window: the console, the status line, and a banner over the tensor graph
  void the_window_shows_why_a_trace_does_not_open() {
    QJsonObject doc = fixture();
    QJsonArray ctxs = doc["contexts"].toArray();
    QJsonObject c = ctxs[0].toObject();
    c["kind"] = 5;
    ctxs[0] = c;
    doc["contexts"] = ctxs;
    const QString bad = write("bad.json", bytes(doc));
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QString err;
    QVERIFY(!w.open_trace(bad, &err));
    QCOMPARE(err, bad + ": contexts[0].kind: expected a string, found the number 5");
    QVERIFY2(w.trace_error().contains("Cannot open the trace bad.json") && w.trace_error().contains("contexts[0].kind"),
             qPrintable(w.trace_error()));
    QVERIFY(w.console()->toPlainText().contains(err));
    bool in_status = false;
    for (auto* l : w.statusBar()->findChildren<QLabel*>()) in_status |= l->text().contains(err);
    QVERIFY(in_status);
    QVERIFY(w.session()->contexts().isEmpty());
    // a good trace clears it
    QVERIFY(w.open_trace(write("good.json", bytes(fixture()))));
    QCOMPARE(w.trace_error(), QString());
  }
};

QTEST_MAIN(TestTraceCheck)
#include "test_trace_check.moc"
