#include "viewer/graph/graph_layout.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QProcess>
#include <QTimer>
#include <climits>
#include <cmath>

namespace tsv {

namespace {
double g_max_stall_ms = 0;

QByteArray quote(const QString& s) {
  QString q = s;
  q.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
  return '"' + q.toUtf8() + '"';
}

QPointF point(const QString& s, double height) {
  auto xy = s.split(',');
  return {xy.value(0).toDouble(), height - xy.value(1).toDouble()};
}
}  // namespace

QByteArray GraphInput::to_dot() const {
  QByteArray d = QByteArray("digraph G {\n  rankdir=") + (left_to_right ? "LR" : "TB") + "; nodesep=0.2; ranksep=0.3;\n" +
                 // a big graph (a 700-kernel training step's kernel graph): few crossing-minimization and network-simplex
                 // rounds and straight edges, or dot takes minutes; ~2 s for 700 nodes and 1,300 labelled edges
                 QByteArray(nodes.size() > kQuickLayoutAbove ? "  mclimit=0.01; nslimit=0.1; nslimit1=0.1; splines=line;\n" : "") +
                 "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=" +
                 QByteArray::number(node_font_px()) + ", margin=\"0.08,0.03\"];\n";
  for (const auto& n : nodes)
    d += "  \"n" + QByteArray::number(n.id) + "\" [label=" + quote(n.label) + ", fillcolor=\"" +
         n.fill.name().toLatin1() + "\"];\n";
  // names are quoted: collapsed clusters have negative ids
  for (int i = 0; i < edges.size(); ++i) {
    const auto& [a, b] = edges[i];
    d += "  \"n" + QByteArray::number(a) + "\" -> \"n" + QByteArray::number(b) + "\"";
    const QString label = edge_labels.value(i);
    if (!label.isEmpty())
      d += " [label=" + quote(label) + ", fontname=\"DejaVu Sans\", fontsize=" + QByteArray::number(qRound(9 * text_scale)) + "]";
    d += ";\n";
  }
  d += "}\n";
  return d;
}

QByteArray GraphInput::hash() const { return QCryptographicHash::hash(to_dot(), QCryptographicHash::Sha1).toHex(); }

bool parse_dot_json(const QByteArray& json, GraphLayout* out, QString* error) {
  QJsonParseError pe;
  auto doc = QJsonDocument::fromJson(json, &pe);
  if (!doc.isObject()) {
    if (error) *error = QStringLiteral("dot gave no JSON: ") + pe.errorString();
    return false;
  }
  auto root = doc.object();
  auto bb = root["bb"].toString().split(',');
  if (bb.size() != 4) {
    if (error) *error = QStringLiteral("dot gave no bounding box");
    return false;
  }
  const double h = bb[3].toDouble();
  GraphLayout l;
  l.bounds = QRectF(0, 0, bb[2].toDouble(), h);
  QHash<int, int> id_of_gvid;
  for (const auto& ov : root["objects"].toArray()) {
    auto o = ov.toObject();
    QString name = o["name"].toString();
    if (!name.startsWith('n')) continue;
    int id = name.mid(1).toInt();
    id_of_gvid.insert(o["_gvid"].toInt(), id);
    QPointF c = point(o["pos"].toString(), h);
    double w = o["width"].toString().toDouble() * 72, hh = o["height"].toString().toDouble() * 72;
    l.nodes.insert(id, QRectF(c.x() - w / 2, c.y() - hh / 2, w, hh));
  }
  for (const auto& ev : root["edges"].toArray()) {
    const QJsonObject eo = ev.toObject();
    if (eo.contains("lp") && !eo["label"].toString().isEmpty())
      l.edge_labels.push_back({point(eo["lp"].toString(), h), eo["label"].toString()});
    auto parts = eo["pos"].toString().split(' ', Qt::SkipEmptyParts);
    QPointF end;
    bool has_end = false;
    QList<QPointF> pts;
    for (const auto& p : parts) {
      if (p.startsWith("e,")) end = point(p.mid(2), h), has_end = true;
      else if (!p.startsWith("s,")) pts.push_back(point(p, h));
    }
    if (pts.isEmpty()) continue;
    const int tail = id_of_gvid.value(eo["tail"].toInt(-1), INT_MIN), head = id_of_gvid.value(eo["head"].toInt(-1), INT_MIN);
    QPainterPath path(pts[0]);
    for (int i = 1; i + 2 < pts.size(); i += 3) path.cubicTo(pts[i], pts[i + 1], pts[i + 2]);
    if (has_end) {
      QPointF tip = end, base = path.currentPosition();
      QPointF d = tip - base;
      double len = std::hypot(d.x(), d.y());
      if (len > 0) {
        QPointF n(-d.y() / len * 3.5, d.x() / len * 3.5);
        l.arrows.push_back(QPolygonF({tip, base + n, base - n}));
        l.arrow_edge.push_back(l.edges.size());
      }
    }
    l.edges.push_back(path);
    l.edge_ends.push_back({tail, head});
  }
  *out = std::move(l);
  return true;
}

LayoutEngine::LayoutEngine(QObject* parent) : QObject(parent) {}

LayoutEngine::~LayoutEngine() {
  for (auto* p : running_) {
    p->disconnect(this);
    p->kill();
    p->waitForFinished(1000);
    delete p;
  }
}

LayoutEngine* LayoutEngine::instance() {
  static LayoutEngine* e = new LayoutEngine();
  return e;
}

double LayoutEngine::max_ui_stall_ms() { return g_max_stall_ms; }
void LayoutEngine::note_ui_stall_ms(double ms) { g_max_stall_ms = std::max(g_max_stall_ms, ms); }

void LayoutEngine::done(const QByteArray&) {
  if (pending() == 0) emit idle();
}

void LayoutEngine::cancel(const QByteArray& key) {
  QProcess* p = running_.value(key);
  if (!p || --waiters_[key] > 0) return;
  running_.remove(key);
  waiters_.remove(key);
  p->disconnect(this);
  p->kill();
  p->waitForFinished(1000);
  p->deleteLater();
  done(key);
}

QByteArray LayoutEngine::request(const GraphInput& g) {
  const QByteArray dot = g.to_dot();
  const QByteArray key = QCryptographicHash::hash(dot, QCryptographicHash::Sha1).toHex();
  if (cache_.contains(key)) {
    ++cache_hits_;
    ++queued_answers_;
    QTimer::singleShot(0, this, [this, key] {
      --queued_answers_;
      emit finished(key, cache_.value(key));
      done(key);
    });
    return key;
  }
  if (running_.contains(key)) {  // the running layout answers both requests
    ++waiters_[key];
    return key;
  }
  auto* p = new QProcess(this);
  running_.insert(key, p);
  waiters_[key] = 1;
  ++layouts_started_;
  auto* timer = new QTimer(p);
  timer->setSingleShot(true);
  connect(timer, &QTimer::timeout, p, [p] { p->kill(); });
  connect(p, &QProcess::finished, this, [this, p, key](int code, QProcess::ExitStatus status) {
    running_.remove(key);
    waiters_.remove(key);
    p->deleteLater();
    if (status != QProcess::NormalExit || code != 0) {
      emit failed(key, status != QProcess::NormalExit ? QStringLiteral("dot was stopped (timeout)")
                                                      : QString::fromUtf8(p->readAllStandardError()).trimmed());
      return done(key);
    }
    QElapsedTimer t;
    t.start();
    GraphLayout l;
    QString err;
    bool ok = parse_dot_json(p->readAllStandardOutput(), &l, &err);
    g_max_stall_ms = std::max(g_max_stall_ms, t.nsecsElapsed() / 1e6);
    if (ok) {
      cache_.insert(key, l);
      cache_order_.push_back(key);
      if (cache_order_.size() > kCacheSize) cache_.remove(cache_order_.takeFirst());
      emit finished(key, l);
    } else {
      emit failed(key, err);
    }
    done(key);
  });
  connect(p, &QProcess::errorOccurred, this, [this, p, key](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    running_.remove(key);
    waiters_.remove(key);
    p->deleteLater();
    emit failed(key, QStringLiteral("cannot start Graphviz's dot (install the graphviz package)"));
    done(key);
  });
  p->start(QStringLiteral("dot"), {QStringLiteral("-Tjson0")});
  p->write(dot);
  p->closeWriteChannel();
  timer->start(timeout_ms_);
  return key;
}

}  // namespace tsv
