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

namespace {
// the point where the segment from r's centre towards `to` leaves r
QPointF border_point(const QRectF& r, const QPointF& to) {
  const QPointF c = r.center(), d = to - c;
  if (d.isNull()) return c;
  const double sx = d.x() != 0 ? (r.width() / 2) / std::abs(d.x()) : 1e300;
  const double sy = d.y() != 0 ? (r.height() / 2) / std::abs(d.y()) : 1e300;
  return c + d * std::min({sx, sy, 1.0});
}
// an arrowhead ending at `tip`, coming from `from`
QPolygonF arrowhead(const QPointF& from, const QPointF& tip) {
  QPointF d = tip - from;
  const double len = std::hypot(d.x(), d.y());
  if (len < 1e-9) return {};
  d /= len;
  const QPointF n(-d.y(), d.x()), base = tip - d * 8;
  return QPolygonF({tip, base + n * 3.5, base - n * 3.5, tip});
}
}  // namespace

GraphLayout splice_layout(const GraphLayout& old, int replaced, const GraphLayout& sub, const GraphInput& g) {
  GraphLayout out;
  const QRectF r = old.nodes.value(replaced);
  QRectF b;
  for (const QRectF& n : sub.nodes) b = b.isNull() ? n : b.united(n);
  if (b.isNull()) b = QRectF(r.topLeft(), QSizeF(1, 1));
  const bool lr = g.left_to_right;
  // along the ranks (down, or right) and across them
  auto along = [lr](const QPointF& p) { return lr ? p.x() : p.y(); };
  auto across = [lr](const QPointF& p) { return lr ? p.y() : p.x(); };
  auto make = [lr](double a, double c) { return lr ? QPointF(a, c) : QPointF(c, a); };
  const double r_along0 = lr ? r.left() : r.top(), r_len = lr ? r.width() : r.height(), r_breadth = lr ? r.height() : r.width();
  const double b_len = lr ? b.width() : b.height(), b_breadth = lr ? b.height() : b.width();
  const double extra_len = std::max(0.0, b_len - r_len), extra_half = std::max(0.0, b_breadth - r_breadth) / 2;
  const QPointF sub_shift = make(r_along0 - (lr ? b.left() : b.top()), across(r.center()) - across(b.center()));
  // how a point of the old layout moves: after the node's rank on by extra_len, beside it aside by extra_half
  auto shift_of = [&](const QPointF& p) {
    if (along(p) > along(r.center()) + r_len / 2) return make(extra_len, 0);
    if (along(p) >= r_along0 - 1 && along(p) <= r_along0 + b_len + 1) return make(0, across(p) >= across(r.center()) ? extra_half : -extra_half);
    return QPointF(0, 0);
  };
  QHash<int, QPointF> moved;  // each node's shift (the sub's nodes: sub_shift)
  for (auto it = old.nodes.constBegin(); it != old.nodes.constEnd(); ++it) {
    if (it.key() == replaced) continue;
    moved.insert(it.key(), shift_of(it.value().center()));
    out.nodes.insert(it.key(), it.value().translated(moved.value(it.key())));
  }
  for (auto it = sub.nodes.constBegin(); it != sub.nodes.constEnd(); ++it) {
    moved.insert(it.key(), sub_shift);
    out.nodes.insert(it.key(), it.value().translated(sub_shift));
  }
  // each edge of g: a route it had (old's or sub's) moved with its ends, else a straight one
  QHash<QPair<int, int>, int> old_edge, sub_edge;
  for (int i = 0; i < old.edge_ends.size(); ++i) old_edge.insert(old.edge_ends[i], i);
  for (int i = 0; i < sub.edge_ends.size(); ++i) sub_edge.insert(sub.edge_ends[i], i);
  auto arrows_of = [](const GraphLayout& l, int edge) {
    QList<QPolygonF> a;
    for (int k = 0; k < l.arrows.size(); ++k)
      if (l.arrow_edge.value(k) == edge) a << l.arrows[k];
    return a;
  };
  for (const auto& e : g.edges) {
    if (!out.nodes.contains(e.first) || !out.nodes.contains(e.second)) continue;
    const bool in_sub = sub.nodes.contains(e.first) && sub.nodes.contains(e.second);
    const GraphLayout* from = in_sub ? &sub : &old;
    const int i = in_sub ? sub_edge.value(e, -1) : old_edge.value(e, -1);
    const QPointF ds = moved.value(e.first), dt = moved.value(e.second);
    const int index = int(out.edges.size());
    if (i >= 0 && ds == dt) {
      out.edges.push_back(from->edges[i].translated(ds));
      for (const QPolygonF& a : arrows_of(*from, i)) out.arrows << a.translated(ds), out.arrow_edge << index;
    } else {
      const QRectF rs = out.nodes.value(e.first), rt = out.nodes.value(e.second);
      const QPointF p = border_point(rs, rt.center()), q = border_point(rt, rs.center());
      QPainterPath path(p);
      path.lineTo(q);
      out.edges.push_back(path);
      out.arrows << arrowhead(p, q);
      out.arrow_edge << index;
    }
    out.edge_ends.push_back(e);
  }
  for (const auto& [pos, text] : old.edge_labels) out.edge_labels.push_back({pos + shift_of(pos), text});
  for (const QRectF& n : out.nodes) out.bounds = out.bounds.isNull() ? n : out.bounds.united(n);
  for (const QPainterPath& p : out.edges) out.bounds = out.bounds.united(p.boundingRect());
  return out;
}

void LayoutEngine::put(const QByteArray& key, const GraphLayout& layout) {
  if (!cache_.contains(key)) {
    cache_order_.push_back(key);
    if (cache_order_.size() > kCacheSize) cache_.remove(cache_order_.takeFirst());
  }
  cache_.insert(key, layout);
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
