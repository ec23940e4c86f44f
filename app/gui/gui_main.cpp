#include "app/gui/gui_main.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/gui/main_window.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/session.h"

namespace tsgui {

bool display_available() {
  auto set = [](const char* n) {
    const char* v = std::getenv(n);
    return v && *v;
  };
  if (set("QT_QPA_PLATFORM")) return std::strncmp(std::getenv("QT_QPA_PLATFORM"), "offscreen", 9) != 0;
  return set("DISPLAY") || set("WAYLAND_DISPLAY");
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
  QString file, dev, shot;
  bool run = false;
  for (int i = 1; i < argc; ++i) {
    QString a = QString::fromLocal8Bit(argv[i]);
    if (a == "--run") run = true;
    else if ((a == "--dev" || a == "--screenshot") && i + 1 < argc) (a == "--dev" ? dev : shot) = QString::fromLocal8Bit(argv[++i]);
    else if (a.startsWith("--dev=")) dev = a.mid(6);
    else if (a.startsWith("--screenshot=")) shot = a.mid(13);
    else if (file.isEmpty() && !a.startsWith("-")) file = a;
    else {
      std::fprintf(stderr, "tinyscope: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (dev.isEmpty() && qEnvironmentVariableIsSet("DEV")) dev = qEnvironmentVariable("DEV");

  // a screenshot needs no display: render offscreen when there is none
  if (!shot.isEmpty() && !display_available() && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("tinyscope"));
  QApplication::setApplicationName(QStringLiteral("tinyscope"));
  const bool screenshot = !shot.isEmpty();
  MainWindow w(examples_dir(), /*restore_layout=*/!screenshot);
  if (screenshot) w.resize(1600, 1000);
  if (!dev.isEmpty()) w.set_device(dev);
  const QString theme = qEnvironmentVariable("TINYSCOPE_THEME");  // light|dark: overrides the saved choice
  if (!theme.isEmpty()) w.set_dark(theme == "dark");
  if (file.endsWith(".json")) {
    if (!w.open_trace(file)) std::fprintf(stderr, "tinyscope: cannot open trace %s\n", qPrintable(file));
  } else if (!file.isEmpty()) {
    if (!QFileInfo::exists(file)) {
      std::fprintf(stderr, "tinyscope: no such script: %s\n", qPrintable(file));
      return 2;
    }
    w.open_script(file);
  }
  w.show();
  if (screenshot) {
    QCoreApplication::processEvents();
    w.default_layout();
  }

  // these live until app.exec() returns: the screenshot callbacks refer to them
  QElapsedTimer clock, tick;
  qint64 worst_gap_ms = 0;
  QTimer probe;
  if (screenshot) {
    clock.start();
    // event-loop latency probe: the longest gap between 5 ms ticks is the worst UI-thread stall of the run
    tick.start();
    probe.setInterval(5);
    QObject::connect(&probe, &QTimer::timeout, [&] { worst_gap_ms = std::max(worst_gap_ms, tick.restart()); });
    probe.start();
    auto take = [&w, shot, &clock, &worst_gap_ms] {
      static bool done = false;
      if (done) return;
      done = true;
      QTimer::singleShot(400, &w, [&w, shot, &clock, &worst_gap_ms] {
        QImage img = w.grab().toImage();
        bool ok = img.save(shot);
        std::fprintf(stderr,
                     "tinyscope: screenshot %s %s after %.1f s, %d calls on %s (UI thread: longest event-loop gap %lld ms, "
                     "longest graph parse+draw %.2f ms)\n",
                     qPrintable(shot), ok ? "written" : "NOT written", clock.elapsed() / 1000.0,
                     static_cast<int>(w.session()->calls().size()), qPrintable(w.session()->device()),
                     static_cast<long long>(worst_gap_ms), tsv::LayoutEngine::max_ui_stall_ms());
        QCoreApplication::exit(ok ? 0 : 1);
      });
    };
    QObject::connect(&w, &MainWindow::settled_now, &w, take);
    // the safety net: a hung run or layout still gives a picture
    QTimer::singleShot(180000, &w, [&w, take] {
      w.stop();
      take();
    });
    if (run) QTimer::singleShot(0, &w, &MainWindow::run);
    else QTimer::singleShot(200, &w, [&w, take] {
      if (w.settled()) take();
    });
  } else if (run) {
    QTimer::singleShot(0, &w, &MainWindow::run);
  }
  return app.exec();
}

}  // namespace tsgui
