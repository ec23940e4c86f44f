#include "app/gui/gui_main.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include "app/gui/main_window.h"
#include "app/gui/tour.h"
#include "viewer/panes/access_pane.h"
#include "viewer/panes/graph_pane.h"
#include "app/gui/run_controller.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/session.h"
#include "viewer/panes/stepper_pane.h"

namespace tsgui {

bool display_available() {
  auto set = [](const char* n) {
    const char* v = std::getenv(n);
    return v && *v;
  };
  if (set("QT_QPA_PLATFORM")) return std::strncmp(std::getenv("QT_QPA_PLATFORM"), "offscreen", 9) != 0;
  return set("DISPLAY") || set("WAYLAND_DISPLAY");
}

bool check_trace_file(const std::string& path, std::string* error) {
  tsv::Session s;
  QString err;
  if (s.load(QString::fromStdString(path), &err)) return true;
  *error = err.toStdString();
  return false;
}

namespace {
QString examples_dir() {
  QStringList candidates;
  if (qEnvironmentVariableIsSet("TINYSCOPE_SOURCE_DIR"))
    candidates << qEnvironmentVariable("TINYSCOPE_SOURCE_DIR") + "/resources/examples";
  candidates << QCoreApplication::applicationDirPath() + "/../share/tinyscope/examples";
#ifdef TINYSCOPE_SOURCE_DIR
  candidates << QStringLiteral(TINYSCOPE_SOURCE_DIR "/resources/examples");
#endif
  candidates << QDir::currentPath() + "/resources/examples";
  for (const auto& c : candidates)
    if (QFileInfo(c).isDir()) return QDir(c).absolutePath();
  return QDir::currentPath();
}

// the window's command line: `tinyscope [SCRIPT.py | TRACE.json] [flags]` (README: the window's flags)
struct Options {
  QString file, dev, shot, compare, select, tour, compare_trace, pane, lesson, whatif, colour, export_access;
  bool run = false, measure = false, snapshots = false, extended = false, large_text = false;
  bool dev_from_env = false;  // the device is DEV's, not --dev's
  int runs = 1, step = 0, beam = -1;
};

// a whole number from lo to hi
bool whole(const QString& text, int lo, int hi, int* out) {
  bool ok = false;
  *out = text.toInt(&ok);
  return ok && *out >= lo && *out <= hi;
}

// the first argument that names no flag of the window ("--nosuch", "--nosuch=1", "-x"), for the error
QString unknown_argument(const QStringList& args, const QStringList& valued, const QStringList& flags) {
  for (qsizetype i = 1; i < args.size() && args[i] != QLatin1String("--"); ++i) {
    const QString& a = args[i];
    if (!a.startsWith('-') || a == QLatin1String("-")) continue;
    const QString name = a.startsWith(QLatin1String("--")) ? a.mid(2).section('=', 0, 0) : QString();
    if (valued.contains(name)) i += a.contains('=') ? 0 : 1;  // (its value follows)
    else if (!flags.contains(name)) return a;
  }
  return {};
}

// parses the flags into *o; a flag this window does not have, a missing value or a bad one is an error on stderr
// that names the flag: exit status 2
int parse_options(int argc, char** argv, Options* o) {
  QStringList args;
  for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  QCommandLineParser parser;
  parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
  const QStringList valued = {"dev", "screenshot", "compare", "compare-trace", "select", "tour", "pane", "step", "beam", "runs", "lesson", "whatif", "colour", "export-access"};
  const QStringList flags = {"run", "measure", "snapshots", "extended", "large-text"};
  for (const QString& name : valued) parser.addOption(QCommandLineOption(name, {}, QStringLiteral("value")));
  for (const QString& name : flags) parser.addOption(QCommandLineOption(name));
  parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("SCRIPT.py or TRACE.json"));
  if (!parser.parse(args)) {
    if (const QStringList unknown = parser.unknownOptionNames(); !unknown.isEmpty()) {
      const QString a = unknown_argument(args, valued, flags);
      std::fprintf(stderr, "tinyscope: unknown argument '%s'\n", qPrintable(a.isEmpty() ? "--" + unknown.front() : a));
    } else
      std::fprintf(stderr, "tinyscope: %s\n", qPrintable(parser.errorText()));
    return 2;
  }
  const QStringList files = parser.positionalArguments();
  if (files.size() > 1) {
    std::fprintf(stderr, "tinyscope: unknown argument '%s'\n", qPrintable(files[1]));
    return 2;
  }
  o->file = files.value(0);
  o->dev = parser.value("dev");
  o->shot = parser.value("screenshot");
  o->compare = parser.value("compare");
  o->compare_trace = parser.value("compare-trace");
  o->select = parser.value("select");
  o->tour = parser.value("tour");
  o->lesson = parser.value("lesson");
  o->whatif = parser.value("whatif");
  o->colour = parser.value("colour");
  o->export_access = parser.value("export-access");
  if (!o->lesson.isEmpty()) {  // --lesson N: the lesson's script is the file, and it runs
    if (!o->file.isEmpty()) {
      std::fprintf(stderr, "tinyscope: --lesson runs the lesson's own script, not %s\n", qPrintable(o->file));
      return 2;
    }
    o->run = true;
  }
  o->pane = parser.value("pane");
  o->run = o->run || parser.isSet("run");
  o->measure = parser.isSet("measure");
  o->snapshots = parser.isSet("snapshots");
  o->extended = parser.isSet("extended");
  o->large_text = parser.isSet("large-text");
  if (parser.isSet("step")) {
    const QString n = parser.value("step");
    bool ok = false;
    o->step = n.toInt(&ok);
    if (!ok || o->step < 1) {
      std::fprintf(stderr, "tinyscope: --step needs a step of the rewrite stepper from 1, not '%s'\n", qPrintable(n));
      return 2;
    }
  }
  if (parser.isSet("beam") && !whole(parser.value("beam"), 0, 8, &o->beam)) {
    std::fprintf(stderr, "tinyscope: --beam needs a beam width from 0 (off) to 8, not '%s'\n", qPrintable(parser.value("beam")));
    return 2;
  }
  if (parser.isSet("runs")) {
    if (!whole(parser.value("runs"), 1, 10000, &o->runs)) {
      std::fprintf(stderr, "tinyscope: --runs needs a number of runs from 1 to 10000, not '%s'\n", qPrintable(parser.value("runs")));
      return 2;
    }
    o->run = true;
  }
  o->dev_from_env = o->dev.isEmpty() && !qEnvironmentVariable("DEV").isEmpty();
  if (o->dev_from_env) o->dev = qEnvironmentVariable("DEV");
  return 0;
}

// an unknown --dev / --compare (or DEV) is an error naming it and the devices that exist, on stderr and in the
// window, and nothing runs: never another device in its place. "" when both are known.
QString check_devices(MainWindow& w, Options* o) {
  QString device_error;
  auto check = [&](const QString& flag, const QString& name, bool ok, const QString& err) {
    if (ok) return;
    device_error = QStringLiteral("tinyscope: %1 %2: %3").arg(flag, name, err);
    std::fprintf(stderr, "%s\n", qPrintable(device_error));
  };
  QString err;
  if (!o->dev.isEmpty()) check(o->dev_from_env ? "DEV" : "--dev", o->dev, w.set_device(o->dev, &err), err);
  if (!o->compare.isEmpty()) check("--compare", o->compare, w.set_compare_device(o->compare, &err), err);
  if (!device_error.isEmpty()) {
    w.report_device_error(device_error + QStringLiteral(" (nothing runs)"));
    o->run = false;
  }
  return device_error;
}

// --snapshots, --beam N [--extended], --select, --tour N and TINYSCOPE_THEME; 0, or 2 after an error on stderr
int configure(MainWindow& w, const Options& o) {
  if (o.snapshots) w.set_snapshots(true);
  if (o.large_text) w.set_large_text(true);  // View > Larger text (e.g. for a screenshot of it)
  if (o.extended && o.beam <= 0) {
    std::fprintf(stderr, "tinyscope: --extended is the opt space BEAM searches: it needs --beam N (N from 1)\n");
    return 2;
  }
  if (o.beam >= 0) w.set_beam(o.beam, o.extended);
  if (!o.select.isEmpty()) w.set_initial_context(o.select);
  if (!o.tour.isEmpty()) {
    bool ok = false;
    const int stop = o.tour.toInt(&ok);
    if (!ok || stop < 1 || stop > w.tour()->stops()) {
      std::fprintf(stderr, "tinyscope: --tour needs a stop from 1 to %d, not '%s'\n", w.tour()->stops(), qPrintable(o.tour));
      return 2;
    }
    w.set_initial_tour(stop);
  }
  if (!o.colour.isEmpty()) {  // --colour METRIC: the graphs' nodes coloured by a metric of their call
    const QStringList& names = tsv::GraphPane::metric_keys();
    const int m = names.indexOf(o.colour.toLower());
    if (m < 0) {
      std::fprintf(stderr, "tinyscope: --colour needs one of %s, not '%s'\n", qPrintable(names.join(", ")), qPrintable(o.colour));
      return 2;
    }
    for (auto* g : w.findChildren<tsv::GraphPane*>()) g->set_metric(static_cast<tsv::GraphPane::Metric>(m));
  }
  const QString theme = qEnvironmentVariable("TINYSCOPE_THEME");  // light|dark: overrides the saved choice
  if (!theme.isEmpty()) w.set_dark(theme == "dark");
  return 0;
}

// the trace or the script named, then --compare-trace and --pane; false after an error on stderr that ends it (exit
// status 2). A trace that cannot be opened is shown in the window and raises *exit_code to 1.
bool open_file(MainWindow& w, const Options& o, int* exit_code) {
  if (!o.lesson.isEmpty()) {  // --lesson N (1-based, Help > Lessons' order) or a lesson file
    const QStringList all = lesson_resources();
    bool num = false;
    const int n = o.lesson.toInt(&num);
    if (num && (n < 1 || n > all.size())) {
      std::fprintf(stderr, "tinyscope: --lesson needs a lesson from 1 to %d, not '%s'\n", int(all.size()), qPrintable(o.lesson));
      return false;
    }
    QString err;
    if (!w.prepare_lesson(num ? all[n - 1] : o.lesson, &err)) {
      std::fprintf(stderr, "tinyscope: --lesson %s: %s\n", qPrintable(o.lesson), qPrintable(err));
      return false;
    }
  } else if (o.file.endsWith(".json") && o.shot.isEmpty() && o.compare_trace.isEmpty() && QFileInfo(o.file).size() > MainWindow::kAsyncTraceBytes) {
    // a big trace: read off the UI thread once the window shows, its progress in the status bar at once (a failure is
    // shown in the window)
    QTimer::singleShot(0, &w, [&w, file = o.file] { w.open_trace(file); });
  } else if (o.file.endsWith(".json")) {
    QString trace_err;  // the window shows it too; the exit code says it
    if (!w.open_trace(o.file, &trace_err)) {
      std::fprintf(stderr, "tinyscope: cannot open the trace %s\n", qPrintable(trace_err));
      *exit_code = std::max(*exit_code, 1);
    }
  } else if (!o.file.isEmpty()) {
    if (!QFileInfo::exists(o.file)) {
      std::fprintf(stderr, "tinyscope: no such script: %s\n", qPrintable(o.file));
      return false;
    }
    w.open_script(o.file);
  }
  // --compare-trace T.json: the trace opened (or the first run's, once it is in) beside a saved one
  if (!o.compare_trace.isEmpty()) {
    auto compare_now = [&w, compare_trace = o.compare_trace] {
      QString e;
      if (!w.compare_with_trace(compare_trace, &e)) std::fprintf(stderr, "tinyscope: --compare-trace %s: %s\n", qPrintable(compare_trace), qPrintable(e));
    };
    if (o.run) {
      auto once = std::make_shared<QMetaObject::Connection>();
      *once = QObject::connect(&w, &MainWindow::run_finished, &w, [once, compare_now](bool ok) {
        QObject::disconnect(*once);
        if (ok) compare_now();
      });
    } else if (!w.session()->raw().isEmpty()) {
      compare_now();
    } else {
      std::fprintf(stderr, "tinyscope: --compare-trace needs a trace to open or --run\n");
      return false;
    }
  }
  // --pane NAME: that dock in front (a tab such as Roofline or Values), by its title or its name; --export-access
  // raises the Access pane (it draws the frames)
  if (!o.pane.isEmpty() || !o.export_access.isEmpty()) {
    const QString pane = o.pane.isEmpty() ? QStringLiteral("access") : o.pane;
    QDockWidget* dock = nullptr;
    QStringList names;
    for (auto* d : w.findChildren<QDockWidget*>()) {
      names << d->objectName();
      if (d->objectName().compare(pane, Qt::CaseInsensitive) == 0 || d->windowTitle().compare(pane, Qt::CaseInsensitive) == 0) dock = d;
    }
    if (!dock) {
      std::fprintf(stderr, "tinyscope: --pane %s: no such pane (%s)\n", qPrintable(pane), qPrintable(names.join(", ")));
      return false;
    }
    dock->show();
    dock->raise();
  }
  return true;
}

// --step N: once the run settled, the stepper at step N of the selected context, its dock given the right column
// and the column half the window; true while that step's layout is still coming (settled_now follows it)
bool show_step(MainWindow& w, int step) {
  auto* stepper = w.findChild<tsv::StepperPane*>();
  auto* dock = w.findChild<QDockWidget*>(QStringLiteral("stepper"));
  if (!stepper || !dock) return false;
  // the kernel AST and the source as tabs under it (a click away), the column half the window
  dock->show();
  auto* ast = w.findChild<QDockWidget*>(QStringLiteral("kernel_ast"));
  auto* source = w.findChild<QDockWidget*>(QStringLiteral("source"));
  if (ast && source && !ast->isFloating() && !source->isFloating()) {
    w.tabifyDockWidget(ast, source);
    w.tabifyDockWidget(ast, dock);
  }
  dock->raise();
  w.resizeDocks({dock}, {w.width() * 52 / 100}, Qt::Horizontal);
  stepper->set_step(step - 1);
  return stepper->busy();
}

// the window shown, then the runs (--run, --runs N), --step, and --screenshot and --export-access as it settles; the
// event loop's code, or exit_code when it is 0
int show_and_run(QApplication& app, MainWindow& w, const Options& o, int exit_code) {
  const bool screenshot = !o.shot.isEmpty() || !o.export_access.isEmpty();
  const QString shot = o.shot, frames = o.export_access;
  const int runs = o.runs, step = o.step;
  const bool run = o.run;
  w.show();  // the first show lays the docks out (settled() waits for it), as for every launch
  // each run reports Run-to-all-panes time and the longest event-loop gap (TINYSCOPE_PERF=1 does it too)
  if (screenshot || o.measure) w.set_measuring(true, /*print=*/true);
  w.controller()->warm_up();

  bool step_shown = step == 0;
  auto step_now = [&w, step, &step_shown]() {
    if (step_shown) return false;
    step_shown = true;
    return show_step(w, step);
  };
  // these live until app.exec() returns: the callbacks refer to them
  QElapsedTimer clock;
  clock.start();
  int runs_started = 0;
  bool run_queued = false;  // settled_now() comes more than once per run (each pane, the layout engine)
  auto next_run = [&w, &runs_started, &run_queued] {
    run_queued = false;
    ++runs_started;
    w.run();
  };
  auto queue_run = [&w, &run_queued, next_run] {
    if (run_queued) return;
    run_queued = true;
    QTimer::singleShot(100, &w, next_run);
  };
  // --whatif A=1,A=,...: once the runs settled, each what-if step in turn (a run compared with the one before); a comma
  // starts a step only before NAME= (KERNEL_OPTS's values hold commas)
  const QStringList whatifs = o.whatif.isEmpty() ? QStringList() : o.whatif.split(QRegularExpression(QStringLiteral(",(?=[A-Z_]+=)")));
  int whatif_next = 0;
  auto whatif_step = [&w, &whatifs, &whatif_next, &run_queued] {
    if (whatif_next >= whatifs.size()) return false;
    if (!run_queued) {
      run_queued = true;
      QTimer::singleShot(100, &w, [&w, &whatifs, &whatif_next, &run_queued] {
        run_queued = false;
        if (!w.settled()) return;  // (a run or a layout still going: the next settled_now applies it)
        QString err;
        if (!w.set_whatif_variable(whatifs[whatif_next++], &err)) std::fprintf(stderr, "tinyscope: --whatif: %s\n", qPrintable(err));
      });
    }
    return true;
  };
  if (screenshot) {
    // every layout in first: the docks', the graphs' and --step's stepper's (polled: a cached layout signals nothing)
    auto ready = [&w] {
      auto* stepper = w.findChild<tsv::StepperPane*>();
      return w.settled() && !(stepper && stepper->busy());
    };
    auto take = [&w, shot, frames, &clock, exit_code, ready, step] {
      static bool done = false;
      if (done) return;
      done = true;
      auto shoot = std::make_shared<std::function<void(int)>>();
      *shoot = [&w, shot, frames, &clock, exit_code, ready, shoot, step](int tries) {
        if (!ready() && tries < 6000) {  // (a long run's trace can take a while to read: up to 10 minutes)
          QTimer::singleShot(100, &w, [shoot, tries] { (*shoot)(tries + 1); });
          return;
        }
        // --export-access DIR: the Access pane's frames as Play steps its loop (before the screenshot: the point stays)
        bool exported = true;
        if (!frames.isEmpty()) {
          QString message;
          auto* panes = w.findChild<tsv::AccessPanes*>();
          tsv::AccessPane* access = panes ? panes->first() : nullptr;
          exported = access && access->export_frames(frames, -1, &message);
          std::fprintf(stderr, "tinyscope: --export-access %s: %s\n", qPrintable(frames), access ? qPrintable(message) : "no Access pane");
          if (shot.isEmpty()) {
            QCoreApplication::exit(exported ? exit_code : 1);
            return;
          }
        }
        if (auto* stepper = w.findChild<tsv::StepperPane*>(); stepper && step > 0)
          std::fprintf(stderr, "tinyscope: --step %d: the stepper shows step %d of %d\n", step, stepper->current_step() + 1, stepper->model()->step_count());
        const qint64 gap = w.longest_stall_ms();  // before the grab, which is no part of the run
        QImage img = w.grab().toImage();
        bool ok = img.save(shot) && exported;
        std::fprintf(stderr,
                     "tinyscope: screenshot %s %s after %.1f s, %d calls on %s (UI thread: longest event-loop gap "
                     "%lld ms, longest graph parse+draw %.2f ms)\n",
                     qPrintable(shot), ok ? "written" : "NOT written", clock.elapsed() / 1000.0,
                     static_cast<int>(w.session()->calls().size()), qPrintable(w.session()->device()),
                     static_cast<long long>(gap), tsv::LayoutEngine::max_ui_stall_ms());
        QCoreApplication::exit(ok ? exit_code : 1);
      };
      QTimer::singleShot(400, &w, [shoot] { (*shoot)(0); });  // (the last layout's paint)
    };
    // --runs N: run again once everything settled, N times, then take the picture
    QObject::connect(&w, &MainWindow::settled_now, &w, [&, take] {
      if (run_queued) return;
      if (run && runs_started < runs) queue_run();
      else if (whatif_step()) return;
      else if (!step_now()) take();
    });
    // the safety net: a hung run or layout still gives a picture
    QTimer::singleShot(180000, &w, [&w, take] {
      w.stop();
      take();
    });
    if (run) queue_run();  // (queued: a settled_now before it starts must not queue a second run)
    else QTimer::singleShot(200, &w, [&w, take, step_now] {
      if (w.settled() && !step_now()) take();
    });
  } else {
    QObject::connect(&w, &MainWindow::settled_now, &w, [&] {
      if (run && runs_started < runs) queue_run();
      else if (!whatif_step()) step_now();
    });
    if (run) queue_run();  // (queued: a settled_now before it starts must not queue a second run)
    else if (step > 0) QTimer::singleShot(200, &w, [&w, step_now] {
      if (w.settled()) step_now();
    });
  }
  const int code = app.exec();
  return code ? code : exit_code;
}
}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int bad = parse_options(argc, argv, &o)) return bad;
  // a screenshot (or --export-access's frames) needs no display: render offscreen when there is none
  const bool screenshot = !o.shot.isEmpty() || !o.export_access.isEmpty();
  if (screenshot && !display_available() && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("tinyscope"));
  QApplication::setApplicationName(QStringLiteral("tinyscope"));
  // a screenshot is a first launch (no saved layout): 1600 x 1000, or the screen's available area where that is smaller
  // (Xvfb at 1280 x 720 shows what a projector shows); offscreen, with no display, 1600 x 1000
  MainWindow w(examples_dir(), /*restore_layout=*/!screenshot);
  const QString device_error = check_devices(w, &o);
  if (const int bad = configure(w, o)) return bad;
  int exit_code = device_error.isEmpty() ? 0 : 2;
  if (!open_file(w, o, &exit_code)) return 2;
  return show_and_run(app, w, o, exit_code);
}

}  // namespace tsgui
