#include "viewer/model/stepper_model.h"

#include "viewer/model/glossary.h"

#include <QColor>
#include <algorithm>
#include <climits>

namespace tsv {

namespace {
// graphs deeper than this are not replayed (the substitution recurses on the UI thread's stack)
constexpr int kMaxDepth = 8000;
// a before -> after chain longer than this is a cycle between recorded rewrites
constexpr int kMaxChain = 1000;

struct ReplayFailed {};

// ALU ops other than comparisons: rebuilt over new sources, they take their value sources' dtype (the engine's
// UOp::replace_src does the same, so a rewrite that changes a source's dtype changes its users' too)
bool follows_source_dtype(const QString& op) {
  static const QSet<QString> ops = {"EXP2", "LOG2", "SIN",  "SQRT", "RECIPROCAL", "NEG",      "TRUNC",    "ADD",
                                    "MUL",  "SHL",  "SHR",  "CDIV", "MAX",        "CMOD",     "XOR",      "OR",
                                    "AND",  "THREEFRY", "SUB", "FDIV", "POW",     "FLOORDIV", "FLOORMOD", "WHERE",
                                    "MULACC"};
  return ops.contains(op);
}
bool is_weak(const QString& dtype) { return dtype.startsWith(QLatin1String("dtypes.weak")); }

QString structure_key(const Uop& u, const QList<int>& src) {
  QString k = u.op + QChar(0x1f) + u.dtype + QChar(0x1f) + u.arg + QChar(0x1f) + QString::number(u.tag) + QChar(0x1f);
  for (int s : src) k += QString::number(s) + ',';
  return k;
}
}  // namespace

StepperModel::StepperModel(Session* session, QObject* parent) : QAbstractTableModel(parent), session_(session) {
  connect(session_, &Session::loaded, this, [this] {
    context_ = -1;
    rebuild();
  });
}

void StepperModel::set_context(int context) {
  if (context < 0 || context >= session_->contexts().size()) context = -1;
  if (context == context_) return;
  context_ = context;
  rebuild();
}

void StepperModel::rebuild() {
  beginResetModel();
  steps_.clear();
  unlisted_ = 0;
  reset_replay();
  if (context_ >= 0) {
    const auto& passes = session_->contexts()[context_].passes;
    qint64 unlisted = 0;  // a sum of counts from the trace: wide, then saturated
    for (int p = 0; p < passes.size(); ++p) {
      for (int m = 0; m < passes[p].matches.size(); ++m) steps_.push_back({p, m});
      unlisted += std::max<qint64>(0, qint64(passes[p].match_count) - passes[p].matches.size());
    }
    unlisted_ = static_cast<int>(std::min<qint64>(unlisted, INT_MAX));
  }
  endResetModel();
}

void StepperModel::reset_replay() {
  cons_.clear();
  canon_.clear();
  built_.clear();
  replays_.clear();
  places_.clear();
  windows_.clear();
  int max_id = -1;
  for (auto it = session_->uops().keyBegin(); it != session_->uops().keyEnd(); ++it) max_id = std::max(max_id, *it);
  // the trace's ids are at most TraceLimits::max_uop_id (2^30 - 1), leaving 2^30 ids for replayed nodes; saturate
  // rather than overflow should a session ever hold an id at INT_MAX
  first_built_ = next_built_ = max_id < INT_MAX ? max_id + 1 : INT_MAX;
}

const Match& StepperModel::match(int k) const {
  const Step& s = steps_[k];
  return session_->contexts()[context_].passes[s.pass].matches[s.match];
}

const Pass& StepperModel::pass_of(int k) const { return session_->contexts()[context_].passes[steps_[k].pass]; }

int StepperModel::first_step_of_pass(int pass) const {
  for (int k = 0; k < steps_.size(); ++k)
    if (steps_[k].pass == pass) return k;
  return -1;
}

const Uop* StepperModel::node(int id) const {
  if (id >= first_built_) {
    auto it = built_.constFind(id);
    return it == built_.constEnd() ? nullptr : &it.value();
  }
  return session_->uop(id);
}

QSet<int> StepperModel::nodes_under(int root) const {
  QSet<int> seen;
  if (!node(root)) return seen;
  QList<int> stack{root};
  seen.insert(root);
  while (!stack.isEmpty()) {
    const Uop* u = node(stack.takeLast());
    if (!u) continue;
    for (int s : u->src)
      if (!seen.contains(s)) seen.insert(s), stack.push_back(s);
  }
  return seen;
}

int StepperModel::cons(const Uop& shape, const QList<int>& src) {
  const QString k = structure_key(shape, src);
  if (auto it = cons_.constFind(k); it != cons_.constEnd()) return *it;
  Uop u = shape;
  u.src = src;
  // 2^30 ids above the trace's (see reset_replay()): memory runs out long before; never step past INT_MAX
  const int id = next_built_;
  if (next_built_ < INT_MAX) ++next_built_;
  built_.insert(id, u);
  cons_.insert(k, id);
  return id;
}

int StepperModel::rebuild(const Uop& old, const QList<int>& src) {
  if (!follows_source_dtype(old.op)) return cons(old, src);
  Uop shape = old;
  auto dtype = [&](int i) {
    const Uop* u = i < src.size() ? node(src[i]) : nullptr;
    return u ? u->dtype : QString();
  };
  const int first = old.op == QLatin1String("WHERE") ? 1 : 0;
  const QString a = dtype(first), b = dtype(first + 1);
  if (!a.isEmpty()) shape.dtype = a;
  // two value sources of different dtypes: the engine takes their least upper bound, which for the weak types
  // the rewrites commit (weakint, weakfloat) is the other one
  if (src.size() == first + 2 && !b.isEmpty() && a != b) shape.dtype = is_weak(a) ? b : is_weak(b) ? a : old.dtype;
  return cons(shape, src);
}

int StepperModel::canonical(int id) {
  if (auto it = canon_.constFind(id); it != canon_.constEnd()) return *it;
  if (id >= first_built_) return id;
  // iterative post-order: graphs can be deeper than the UI thread's stack likes. The session's graph is acyclic
  // (check_trace() refuses a cycle); a node met again while its sources are still open stands for itself.
  QList<QPair<int, bool>> stack{{id, false}};
  QSet<int> open;
  while (!stack.isEmpty()) {
    auto [n, expanded] = stack.takeLast();
    if (canon_.contains(n)) continue;
    const Uop* u = session_->uop(n);
    if (!u || (!expanded && open.contains(n))) {
      canon_.insert(n, n);
      continue;
    }
    if (!expanded) {
      open.insert(n);
      stack.push_back({n, true});
      for (int s : u->src)
        if (!canon_.contains(s)) stack.push_back({s, false});
      continue;
    }
    open.remove(n);
    QList<int> src;
    src.reserve(u->src.size());
    for (int s : u->src) src.push_back(canon_.value(s, s));
    const QString k = structure_key(*u, src);
    int c;
    if (auto it = cons_.constFind(k); it != cons_.constEnd()) c = *it;
    else if (src == u->src) cons_.insert(k, n), c = n;
    else c = cons(*u, src);  // its sources had structural twins: a copy over the canonical ones
    canon_.insert(n, c);
  }
  return canon_.value(id, id);
}

int StepperModel::resolve(int id, const QHash<int, int>& map) const {
  for (int hops = 0; hops < kMaxChain; ++hops) {
    auto it = map.constFind(id);
    if (it == map.constEnd() || *it == id) return id;
    id = *it;
  }
  throw ReplayFailed{};
}

int StepperModel::substitute(int id, const QHash<int, int>& map, QHash<int, int>& memo, int depth, QHash<int, int>* rebuilt) {
  if (auto it = memo.constFind(id); it != memo.constEnd()) return *it;
  if (depth > kMaxDepth) throw ReplayFailed{};
  const int target = resolve(id, map);
  const Uop* u = node(target);
  int out = target;
  if (u) {
    const Uop shape = *u;  // cons() below may grow built_ and move u
    QList<int> src;
    src.reserve(shape.src.size());
    bool changed = false;
    for (int s : shape.src) {
      int n = substitute(s, map, memo, depth + 1, rebuilt);
      changed |= n != s;
      src.push_back(n);
    }
    if (changed) {
      out = rebuild(shape, src);
      if (rebuilt && out != target) rebuilt->insert(target, out);
      // the rebuilt node may itself have been rewritten (a rewrite whose sources were rewritten first)
      if (out != target && map.contains(out)) out = substitute(out, map, memo, depth + 1, rebuilt);
    }
  }
  memo.insert(id, out);
  return out;
}

StepperModel::Replay& StepperModel::replay(int pass, int upto) {
  Replay& r = replays_[pass];
  const Pass& p = session_->contexts()[context_].passes[pass];
  if (r.roots.isEmpty()) {
    // every node the pass recorded first, so that a replayed node the trace saw gets the trace's id
    int before = canonical(p.before);
    for (const auto& m : p.matches) canonical(m.before), canonical(m.after);
    canonical(p.after);
    r.roots.push_back(before);
    for (int id : nodes_under(before)) r.image.insert(id, id);
  }
  upto = std::min<int>(upto, p.matches.size());
  while (!r.failed && r.roots.size() <= upto) {
    const int j = r.roots.size() - 1;
    const Match& m = p.matches[j];
    const int b = canonical(m.before), a = canonical(m.after);
    if (auto it = r.map.constFind(b); it != r.map.constEnd() && *it == a) {
      // the engine met an already rewritten node again (through another user): the graph does not change
      r.matched.push_back(-1);
      r.repeat_of.push_back(r.first.value(b, -1));
      r.rebuilt.push_back({});
      r.roots.push_back(r.roots[j]);
      continue;
    }
    // A top-down pass matches nodes already rebuilt over rewritten sources (they are in the current graph); a
    // bottom-up one matches a node before its sources, as it was in the pass's input: then what stands for it
    // now is its image, and the image is what gets replaced.
    const QSet<int> now = nodes_under(r.roots[j]);
    const int here = now.contains(b) ? b : now.contains(r.image.value(b, -1)) ? r.image.value(b) : -1;
    r.matched.push_back(here);
    r.repeat_of.push_back(-1);
    if (!r.first.contains(b)) r.first.insert(b, j);
    r.map.insert(b, a);
    if (here >= 0 && here != b) r.map.insert(here, a);
    // the next state: the current graph under all substitutions so far, to a fixed point (a replacement's own
    // sources may be nodes an earlier match rewrote; the reference's VIZ replays the same way)
    QHash<int, int> memo, rebuilt;
    try {
      r.roots.push_back(substitute(r.roots[j], r.map, memo, 0, &rebuilt));
    } catch (const ReplayFailed&) {
      r.failed = true;
      break;
    }
    r.rebuilt.push_back(std::move(rebuilt));
    for (auto it = r.image.begin(); it != r.image.end(); ++it) it.value() = memo.value(it.value(), it.value());
  }
  return r;
}

StepperModel::Frame StepperModel::frame(int k) {
  Frame f;
  if (k < 0 || k >= steps_.size()) return f;
  const Step& s = steps_[k];
  const Replay& r = replay(s.pass, s.match + 1);
  const bool replayed = r.roots.size() > s.match + 1;
  if (replayed && r.repeat_of.value(s.match, -1) >= 0) {
    f.before = f.after = r.roots[s.match];
    f.exact = true;
    f.repeat_of = k - s.match + r.repeat_of[s.match];
    return f;
  }
  const int matched = replayed ? r.matched.value(s.match, -1) : -1;
  if (matched >= 0) {
    f.before = r.roots[s.match];
    f.after = r.roots[s.match + 1];
    f.exact = true;
  } else {
    f.before = canonical(match(k).before);
    f.after = canonical(match(k).after);
  }
  const QSet<int> b = nodes_under(f.before), a = nodes_under(f.after);
  f.removed = b - a;
  f.added = a - b;
  if (!f.exact) return f;
  // the users of the matched node (transitively) are not rewritten, only rebuilt over new sources: tell them apart,
  // before and after (there: the users of the replacement)
  auto users_of = [this](int root, const QSet<int>& graph) {
    QHash<int, QList<int>> users;
    for (int id : graph)
      if (const Uop* u = node(id))
        for (int src : u->src) users[src].push_back(id);
    QSet<int> out;
    QList<int> queue{root};
    for (int i = 0; i < queue.size(); ++i)
      for (int user : users.value(queue[i]))
        if (!out.contains(user)) out.insert(user), queue.push_back(user);
    return out;
  };
  f.rebuilt_before = users_of(matched, b) & f.removed;
  f.removed -= f.rebuilt_before;
  const int replacement = canonical(match(k).after);
  if (a.contains(replacement)) {
    f.rebuilt_after = users_of(replacement, a) & f.added;
    f.added -= f.rebuilt_after;
  }
  return f;
}

StepperModel::Places& StepperModel::places(int pass, int upto) {
  Places& out = places_[pass];
  const Replay& r = replay(pass, upto);  // roots[0..upto] as far as the replay got
  for (int j = out.graphs.size(); j < r.roots.size() && j <= upto; ++j) {
    const QSet<int> g = nodes_under(r.roots[j]);
    QList<int> ids(g.begin(), g.end());
    std::sort(ids.begin(), ids.end());
    if (j == 0) {
      for (int id : ids) out.place_of.insert(id, id);
      out.graphs.push_back(std::move(ids));
      continue;
    }
    // a place shows one node of a graph: nodes placed before keep their places, except where two of them are in
    // this graph on one place (an old node still used beside its rebuild): the one that is not the place's first
    // gets a place of its own (windows laid out before keep their copy)
    QHash<int, int> held;  // place -> the node of this graph there
    for (int id : ids) {
      auto p = out.place_of.constFind(id);
      if (p == out.place_of.constEnd()) continue;
      const int place = *p;
      auto h = held.constFind(place);
      if (h == held.constEnd()) {
        held.insert(place, id);
        continue;
      }
      const int other = *h, moved = other == place ? id : id == place ? other : std::max(id, other);
      out.place_of.insert(moved, moved);
      held.insert(place, moved == id ? other : id);
      held.insert(moved, moved);
    }
    // a node new to the pass takes the place of the node it rebuilds, unless another node of this graph holds it
    QHash<int, int> from;  // rebuilt node -> the node it rebuilds (the first, where several became one)
    for (auto it = r.rebuilt[j - 1].constBegin(); it != r.rebuilt[j - 1].constEnd(); ++it)
      if (!from.contains(*it) || it.key() < from.value(*it)) from.insert(*it, it.key());
    for (int id : ids) {
      if (out.place_of.contains(id)) continue;
      const int old = from.value(id, -1);
      const int place = old >= 0 && out.place_of.contains(old) && !held.contains(out.place_of.value(old)) ? out.place_of.value(old) : id;
      out.place_of.insert(id, place);
      held.insert(place, id);
    }
    out.graphs.push_back(std::move(ids));
  }
  return out;
}

StepperModel::Window StepperModel::window(int k, int max_places) {
  Window none;
  if (k < 0 || k >= steps_.size()) return none;
  const int pass = steps_[k].pass;
  const int first_step = first_step_of_pass(pass);
  const int matches = session_->contexts()[context_].passes[pass].matches.size();
  Windows& ws = windows_[pass];
  if (ws.max_places != max_places) ws = Windows{max_places, {}, 0};
  // greedy, from where the last window ended, until one holds step k: the replay goes no further than it needs
  while (ws.next < matches && (ws.list.isEmpty() || ws.list.last().last < k)) {
    const int j = ws.next;
    auto graph = [&](int g) -> const QList<int>* {
      const Places& sl = places(pass, g);
      return g < sl.graphs.size() ? &sl.graphs[g] : nullptr;
    };
    // a step the replay placed in the whole graph (or met again): its graphs are roots[j] and roots[j + 1]
    auto placed = [&](int m) {
      if (m >= matches || !graph(m + 1)) return false;
      const Replay& r = replays_[pass];
      return r.matched.value(m, -1) >= 0 || r.repeat_of.value(m, -1) >= 0;
    };
    auto add_places = [&](QSet<int>& to, int g) {
      for (int id : *graph(g)) to.insert(places_[pass].place_of.value(id));
    };
    Window w;
    w.first = w.last = first_step + j;
    QSet<int> all;
    if (placed(j)) {
      add_places(all, j), add_places(all, j + 1);
      w.step_places = all.size();
    }
    if (!placed(j) || all.size() > max_places) {
      ws.list.push_back(w);
      ws.next = j + 1;
      continue;
    }
    int end = j;
    while (placed(end + 1)) {
      QSet<int> more = all;
      add_places(more, end + 2);
      if (more.size() > max_places) break;
      all = std::move(more);
      ++end;
    }
    const Places& sl = places_[pass];
    w.pass = pass;
    w.last = first_step + end;
    w.places = QList<int>(all.begin(), all.end());
    std::sort(w.places.begin(), w.places.end());
    // the edges of every graph of the window, each as often as one node uses that source
    QHash<QPair<int, int>, int> edges;
    for (int g = j; g <= end + 1; ++g)
      for (int id : sl.graphs[g]) {
        if (w.place_of.contains(id)) continue;
        const int to = sl.place_of.value(id);
        w.place_of.insert(id, to);
        const Uop* u = node(id);
        if (!u) continue;
        QHash<int, int> here;
        for (int src : u->src) ++here[sl.place_of.value(src)];
        for (auto it = here.constBegin(); it != here.constEnd(); ++it) {
          int& n = edges[{it.key(), to}];
          n = std::max(n, it.value());
        }
      }
    QList<QPair<int, int>> keys = edges.keys();
    std::sort(keys.begin(), keys.end());
    for (const auto& e : keys)
      for (int i = 0; i < edges.value(e); ++i) w.edges.push_back(e);
    ws.list.push_back(std::move(w));
    ws.next = end + 1;
  }
  for (const Window& w : ws.list)
    if (k >= w.first && k <= w.last) return w;
  return none;
}

int StepperModel::replayed_result(int pass) {
  if (context_ < 0 || pass < 0 || pass >= session_->contexts()[context_].passes.size()) return -1;
  const Replay& r = replay(pass, session_->contexts()[context_].passes[pass].matches.size());
  return r.failed ? -1 : r.roots.last();
}

bool StepperModel::pass_reproduced(int pass) {
  int got = replayed_result(pass);
  return got >= 0 && got == canonical(session_->contexts()[context_].passes[pass].after);
}

int StepperModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : steps_.size(); }
int StepperModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant StepperModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= steps_.size()) return {};
  const Step& s = steps_[index.row()];
  const Pass& p = session_->contexts()[context_].passes[s.pass];
  const Match& m = p.matches[s.match];
  if (role == kPassRole) return s.pass;
  if (role == kMatchRole) return s.match;
  if (role == kRuleKeyRole) return QString(m.loc + '\n' + m.rule);
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kStep: return index.row() + 1;
      case kPass: return p.name;
      case kRule: return m.rule;
      case kLocation: return m.loc;
    }
  }
  if (role == Qt::ToolTipRole) {
    const QString g = glossary_text(p.name);
    return tr("%1, match %2 of %3: %4 at %5").arg(p.name).arg(s.match + 1).arg(p.matches.size()).arg(m.rule, m.loc) +
           (g.isEmpty() ? QString() : QStringLiteral("\n\n") + g);
  }
  if (role == Qt::TextAlignmentRole && index.column() == kStep) return int(Qt::AlignRight | Qt::AlignVCenter);
  // a pass's name reads once, on its first step; the rows after it are the same pass
  if (role == Qt::ForegroundRole && index.column() == kPass && s.match > 0) return QColor(0x88, 0x88, 0x88);
  return {};
}

QVariant StepperModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kStep: return tr("#");
    case kPass: return tr("Pass");
    case kRule: return tr("Rule");
    case kLocation: return tr("Location");
  }
  return {};
}

}  // namespace tsv
