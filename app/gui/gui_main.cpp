#include "app/gui/gui_main.h"

#include <QApplication>
#include <QDockWidget>
#include <QScreen>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "app/gui/main_window.h"
#include "app/gui/tour.h"
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
}  // namespace

int main(int argc, char** argv) {
  QString file, dev, shot, compare, select, tour, compare_trace, pane, step_arg;
  bool run = false, measure = false, snapshots = false, extended = false;
  int runs = 1, step = 0, beam = -1;
  for (int i = 1; i < argc; ++i) {
    QString a = QString::fromLocal8Bit(argv[i]);
    auto value = [&](const char* name, QString* out) {
      const QString flag = QString::fromLatin1(name);
      if (a == flag && i + 1 < argc) return *out = QString::fromLocal8Bit(argv[++i]), true;
      if (a.startsWith(flag + "=")) return *out = a.mid(flag.size() + 1), true;
      return false;
    };
    QString n;
    // a whole number from lo to hi
    auto whole = [](const QString& text, int lo, int hi, int* out) {
      bool ok = false;
      *out = text.toInt(&ok);
      return ok && *out >= lo && *out <= hi;
    };
    if (a == "--run") run = true;
    else if (a == "--measure") measure = true;
    else if (a == "--snapshots") snapshots = true;
    else if (a == "--extended") extended = true;
    else if (value("--dev", &dev) || value("--screenshot", &shot) || value("--compare", &compare) || value("--compare-trace", &compare_trace) ||
             value("--select", &select) || value("--tour", &tour) || value("--pane", &pane))
      continue;
    else if (value("--step", &step_arg)) {
      bool ok = false;
      step = step_arg.toInt(&ok);
      if (!ok || step < 1) {
        std::fprintf(stderr, "tinyscope: --step needs a step of the rewrite stepper from 1, not '%s'\n", qPrintable(step_arg));
        return 2;
      }
    }
    else if (value("--beam", &n)) {
      if (!whole(n, 0, 8, &beam)) {
        std::fprintf(stderr, "tinyscope: --beam needs a beam width from 0 (off) to 8, not '%s'\n", qPrintable(n));
        return 2;
      }
    }
    else if (value("--runs", &n)) {
      if (!whole(n, 1, 10000, &runs)) {
        std::fprintf(stderr, "tinyscope: --runs needs a number of runs from 1 to 10000, not '%s'\n", qPrintable(n));
        return 2;
      }
      run = true;
    }
    else if (file.isEmpty() && !a.startsWith("-")) file = a;
    else {
      std::fprintf(stderr, "tinyscope: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  const bool dev_from_env = dev.isEmpty() && !qEnvironmentVariable("DEV").isEmpty();
  if (dev_from_env) dev = qEnvironmentVariable("DEV");

  // a screenshot needs no display: render offscreen when there is none
  if (!shot.isEmpty() && !display_available() && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("tinyscope"));
  QApplication::setApplicationName(QStringLiteral("tinyscope"));
  const bool screenshot = !shot.isEmpty();
  MainWindow w(examples_dir(), /*restore_layout=*/!screenshot);
  // a screenshot is 1600 x 1000, or the display's size where that is smaller (Xvfb at 1280 x 720 shows what a
  // projector shows); offscreen, with no display, 1600 x 1000
  if (screenshot) {
    QSize size(1600, 1000);
    if (display_available())
      if (const QScreen* sc = QGuiApplication::primaryScreen()) size = size.boundedTo(sc->availableGeometry().size());
    w.resize(size);
  }
  // an unknown --dev / --compare (or DEV) is an error naming it and the devices that exist, on stderr and in the
  // window, and nothing runs: never another device in its place
  QString device_error;
  auto check = [&](const QString& flag, const QString& name, bool ok, const QString& err) {
    if (ok) return;
    device_error = QStringLiteral("tinyscope: %1 %2: %3").arg(flag, name, err);
    std::fprintf(stderr, "%s\n", qPrintable(device_error));
  };
  QString err;
  if (!dev.isEmpty()) check(dev_from_env ? "DEV" : "--dev", dev,
                            w.set_device(dev, &err), err);
  if (!compare.isEmpty()) check("--compare", compare, w.set_compare_device(compare, &err), err);
  if (!device_error.isEmpty()) {
    w.report_device_error(device_error + QStringLiteral(" (nothing runs)"));
    run = false;
  }
  if (snapshots) w.set_snapshots(true);
  if (extended && beam <= 0) {
    std::fprintf(stderr, "tinyscope: --extended is the opt space BEAM searches: it needs --beam N (N from 1)\n");
    return 2;
  }
  if (beam >= 0) w.set_beam(beam, extended);
  if (!select.isEmpty()) w.set_initial_context(select);
  if (!tour.isEmpty()) {
    bool ok = false;
    const int stop = tour.toInt(&ok);
    if (!ok || stop < 1 || stop > w.tour()->stops()) {
      std::fprintf(stderr, "tinyscope: --tour needs a stop from 1 to %d, not '%s'\n", w.tour()->stops(), qPrintable(tour));
      return 2;
    }
    w.set_initial_tour(stop);
  }
  const QString theme = qEnvironmentVariable("TINYSCOPE_THEME");  // light|dark: overrides the saved choice
  if (!theme.isEmpty()) w.set_dark(theme == "dark");
  int exit_code = device_error.isEmpty() ? 0 : 2;
  if (file.endsWith(".json")) {
    QString trace_err;  // the window shows it too; the exit code says it
    if (!w.open_trace(file, &trace_err)) {
      std::fprintf(stderr, "tinyscope: cannot open the trace %s\n", qPrintable(trace_err));
      exit_code = std::max(exit_code, 1);
    }
  } else if (!file.isEmpty()) {
    if (!QFileInfo::exists(file)) {
      std::fprintf(stderr, "tinyscope: no such script: %s\n", qPrintable(file));
      return 2;
    }
    w.open_script(file);
  }
  // --compare-trace T.json: the trace opened (or the first run's, once it is in) beside a saved one
  if (!compare_trace.isEmpty()) {
    auto compare_now = [&w, compare_trace] {
      QString e;
      if (!w.compare_with_trace(compare_trace, &e)) std::fprintf(stderr, "tinyscope: --compare-trace %s: %s\n", qPrintable(compare_trace), qPrintable(e));
    };
    if (run) {
      auto once = std::make_shared<QMetaObject::Connection>();
      *once = QObject::connect(&w, &MainWindow::run_finished, &w, [once, compare_now](bool ok) {
        QObject::disconnect(*once);
        if (ok) compare_now();
      });
    } else if (!w.session()->raw().isEmpty()) {
      compare_now();
    } else {
      std::fprintf(stderr, "tinyscope: --compare-trace needs a trace to open or --run\n");
      return 2;
    }
  }
  // --pane NAME: that dock in front (a tab such as Roofline or Values), by its title or its name
  if (!pane.isEmpty()) {
    QDockWidget* dock = nullptr;
    QStringList names;
    for (auto* d : w.findChildren<QDockWidget*>()) {
      names << d->objectName();
      if (d->objectName().compare(pane, Qt::CaseInsensitive) == 0 || d->windowTitle().compare(pane, Qt::CaseInsensitive) == 0) dock = d;
    }
    if (!dock) {
      std::fprintf(stderr, "tinyscope: --pane %s: no such pane (%s)\n", qPrintable(pane), qPrintable(names.join(", ")));
      return 2;
    }
    dock->show();
    dock->raise();
  }
  w.show();
  if (screenshot) {
    QCoreApplication::processEvents();
    w.default_layout();
  }
  // each run reports Run-to-all-panes time and the longest event-loop gap (TINYSCOPE_PERF=1 does it too)
  if (screenshot || measure) w.set_measuring(true, /*print=*/true);
  w.controller()->warm_up();

  // --step N: once the run settled, the stepper at step N of the selected context, its dock given the right column
  // and the column half the window; true while that step's layout is still coming (settled_now follows it)
  bool step_shown = step == 0;
  auto show_step = [&w, step, &step_shown]() {
    if (step_shown) return false;
    step_shown = true;
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
  if (screenshot) {
    auto take = [&w, shot, &clock, exit_code] {
      static bool done = false;
      if (done) return;
      done = true;
      QTimer::singleShot(400, &w, [&w, shot, &clock, exit_code] {
        const qint64 gap = w.longest_stall_ms();  // before the grab, which is no part of the run
        QImage img = w.grab().toImage();
        bool ok = img.save(shot);
        std::fprintf(stderr,
                     "tinyscope: screenshot %s %s after %.1f s, %d calls on %s (UI thread: longest event-loop gap "
                     "%lld ms, longest graph parse+draw %.2f ms)\n",
                     qPrintable(shot), ok ? "written" : "NOT written", clock.elapsed() / 1000.0,
                     static_cast<int>(w.session()->calls().size()), qPrintable(w.session()->device()),
                     static_cast<long long>(gap), tsv::LayoutEngine::max_ui_stall_ms());
        QCoreApplication::exit(ok ? exit_code : 1);
      });
    };
    // --runs N: run again once everything settled, N times, then take the picture
    QObject::connect(&w, &MainWindow::settled_now, &w, [&, take] {
      if (run_queued) return;
      if (run && runs_started < runs) queue_run();
      else if (!show_step()) take();
    });
    // the safety net: a hung run or layout still gives a picture
    QTimer::singleShot(180000, &w, [&w, take] {
      w.stop();
      take();
    });
    if (run) QTimer::singleShot(0, &w, next_run);
    else QTimer::singleShot(200, &w, [&w, take, show_step] {
      if (w.settled() && !show_step()) take();
    });
  } else {
    QObject::connect(&w, &MainWindow::settled_now, &w, [&] {
      if (run && runs_started < runs) queue_run();
      else show_step();
    });
    if (run) QTimer::singleShot(0, &w, next_run);
    else if (step > 0) QTimer::singleShot(200, &w, [&w, show_step] {
      if (w.settled()) show_step();
    });
  }
  const int code = app.exec();
  return code ? code : exit_code;
}

}  // namespace tsgui
