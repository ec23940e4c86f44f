#pragma once
// What the viewer's tests (test_viewer_models, _graphs, _panes, _window) share: the checked-in trace
// (tests/viewer/data/seed_add.trace.json: tests/corpus/00_seed_add.py run with --trace passes) and synthetic traces.
#include <algorithm>
#include <bit>
#include <cmath>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QGraphicsItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QMap>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <QGraphicsScene>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <climits>
#include "viewer/graph/graph_view.h"
#include "viewer/graph/minimap.h"
#include <QTextBlock>
#include <QProcess>
#include <QSvgRenderer>
#include <QLineEdit>
#include <QLabel>
#include <QAction>
#include <QCheckBox>
#include <QImage>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "app/gui/tour.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/ansi.h"
#include "viewer/model/compare_model.h"
#include "viewer/model/output_compare.h"
#include "viewer/model/rule_counts_model.h"
#include "viewer/model/stepper_model.h"
#include "viewer/model/contexts_model.h"
#include "viewer/model/schedule_model.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/model/uop_text.h"
#include "viewer/panes/values_pane.h"
#include "viewer/panes/code_editor.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_diff.h"
#include "viewer/panes/source_pane.h"
#include "viewer/panes/stepper_pane.h"
#include <QTabWidget>
#include <QTableView>

#include "test_env.h"

#include "test_env.h"

namespace ts_test {
// settings of this test's own (QStandardPaths' test mode, the application's name), cleared: a previous run's window
// state must not leak into this one
inline void own_settings(const QString& test_name) {
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName(QStringLiteral("tinyscope-test"));
  QCoreApplication::setApplicationName(test_name);
  QSettings().clear();
}
inline QString fixture() { return source_dir() + "/tests/viewer/data/seed_add.trace.json"; }

// A synthetic trace with one 1,500-node tensor graph: 15 kernels of 100 nodes in a chain. Kernel k holds uops
// 100k..100k+99; 100k+99 is its stored result (CONTIGUOUS with arg "k<k>", the last one a SINK), the 99 below
// it cycle ADD, MUL, RESHAPE and read the one below (the first reads the previous kernel's result).
inline QByteArray chain_of_kernels_trace() {
  QJsonObject uops;
  for (int k = 0; k < 15; ++k)
    for (int j = 0; j < 100; ++j) {
      const int id = k * 100 + j;
      QJsonArray src;
      if (j > 0) src = {id - 1};
      else if (k > 0) src = {id - 1};
      QString op = j == 99 ? (k == 14 ? "SINK" : "CONTIGUOUS") : (j % 3 == 0 ? "ADD" : (j % 3 == 1 ? "MUL" : "RESHAPE"));
      if (k == 0 && j == 0) op = "BUFFER";
      uops[QString::number(id)] = QJsonObject{{"op", op}, {"dtype", "dtypes.float"}, {"src", src},
                                              {"arg", j == 99 ? QString("k%1").arg(k) : QString("None")},
                                              {"shape", QJsonArray{4}}, {"device", "CPU"}};
    }
  QJsonObject ctx{{"id", 0}, {"kind", "schedule"}, {"name", "chain"}, {"passes", QJsonArray{}},
                  {"tensor_graph", QJsonArray{1499}}};
  QJsonObject root{{"version", 1}, {"contexts", QJsonArray{ctx}}, {"calls", QJsonArray{}}, {"uops", uops}};
  return QJsonDocument(root).toJson();
}
// A synthetic trace of one schedule: a copy from PYTHON into buffer 11, E_4 writes 12 from 11, r_4 writes 13 from
// 12 and 11; a Gradient scope; a second schedule's kernel reads 13 (written by the first schedule) and writes 14.
inline QByteArray kernel_graph_trace() {
  QJsonObject uops;
  auto buffer = [&](int id, const QString& dev, int n) {
    uops[QString::number(id)] = QJsonObject{{"op", "BUFFER"}, {"dtype", "dtypes.float"}, {"src", QJsonArray{}},
                                            {"arg", QString("ParamArg(%1, device='%2')").arg(id).arg(dev)},
                                            {"shape", QJsonArray{n}}, {"device", dev}};
  };
  buffer(10, "PYTHON", 4), buffer(11, "CPU", 4), buffer(12, "CPU", 4), buffer(13, "CPU", 1), buffer(14, "CPU", 1);
  auto item = [](const QString& kind, QJsonArray bufs) { return QJsonObject{{"kind", kind}, {"bufs", bufs}}; };
  QJsonObject s0{{"id", 0}, {"kind", "schedule"}, {"name", "Schedule 2 Kernels"}, {"passes", QJsonArray{}},
                 {"linear", QJsonArray{item("copy", {11, 10}), item("kernel", {12, 11}), item("kernel", {13, 12, 11})}}};
  QJsonObject s1{{"id", 1}, {"kind", "schedule"}, {"name", "Schedule 1 Kernel"}, {"passes", QJsonArray{}},
                 {"linear", QJsonArray{item("kernel", {14, 13})}}};
  auto call = [](const QString& kind, const QString& colored, const QString& key, int counter, int sched) {
    return QJsonObject{{"kind", kind}, {"name", tsv::strip_ansi(colored)}, {"colored_name", colored}, {"device", "CPU"},
                       {"counter", counter}, {"num_args", 2}, {"arg_sizes", QJsonArray{QJsonArray{4, "float"}, QJsonArray{4, "float"}}},
                       {"global_size", QJsonArray{1, 1, 1}}, {"applied_opts", QJsonArray{}}, {"first_run", true},
                       {"program_key", key}, {"seconds", 1e-6}, {"estimates", QJsonObject{{"ops", 0}, {"lds", 0}, {"mem", 0}}},
                       {"schedule_index", sched}};
  };
  QJsonArray calls{call("copy", "copy 16 B, CPU <- PYTHON", "", 1, 0), call("kernel", "E\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m", "ka", 2, 0),
                   call("kernel", "r\x1b[90m_\x1b[0m\x1b[35m4\x1b[0m", "kb", 3, 0), call("kernel", "r_1", "kc", 4, 1)};
  // a scope the script opened (a Gradient one) is a schedule-kind context that ran nothing
  QJsonObject grad{{"id", 2}, {"kind", "schedule"}, {"name", "Gradient"}, {"passes", QJsonArray{}}};
  QJsonObject root{{"version", 1}, {"contexts", QJsonArray{s0, grad, s1}}, {"calls", calls}, {"uops", uops}};
  return QJsonDocument(root).toJson();
}

// the kernel graph trace with one read-back value (an output) of this dtype, shape and values
inline QByteArray trace_with_output(const QString& dtype, int bits, const QList<qint64>& shape, const QList<double>& values) {
  QJsonDocument d = QJsonDocument::fromJson(kernel_graph_trace());
  QJsonObject root = d.object();
  QByteArray bytes;
  for (double v : values) {
    quint64 w = dtype == "float" ? std::bit_cast<quint64>(v) : quint64(qint64(v));
    for (int b = 0; b < 8; ++b) bytes.append(char(w >> (8 * b) & 0xff));
  }
  QJsonArray dims;
  for (qint64 x : shape) dims.append(x);
  root["outputs"] = QJsonArray{QJsonObject{{"where", "t.py:3"}, {"after_call", 2}, {"dtype", dtype}, {"bits", bits},
                                           {"shape", dims}, {"count", values.size()}, {"stored", values.size()},
                                           {"values", QString::fromLatin1(bytes.toBase64())}}};
  return QJsonDocument(root).toJson();
}
}  // namespace ts_test
