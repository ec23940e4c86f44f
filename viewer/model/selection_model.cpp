#include "viewer/model/selection_model.h"

#include <QSet>

#include "viewer/model/session.h"

namespace tsv {

SelectionModel::SelectionModel(Session* session, QObject* parent) : QObject(parent), session_(session) {
  connect(session, &Session::loaded, this, [this] {
    line_of_node_.clear();
    clear();
  });
}

void SelectionModel::set(const Selection& s) {
  if (s == sel_) return;
  sel_ = s;
  emit changed(sel_);
}

void SelectionModel::clear() {
  sel_ = Selection{};
  emit changed(sel_);
}

void SelectionModel::select_call(int call) {
  const auto& calls = session_->calls();
  if (call < 0 || call >= calls.size()) return set({});
  Selection s;
  s.call = call;
  s.program_key = calls[call].program_key;
  s.context = session_->kernel_context(calls[call]);
  if (s.context < 0) s.context = session_->schedule_context(calls[call].schedule_index);
  set(s);
}

int SelectionModel::kernel_context() const {
  const auto& ctxs = session_->contexts();
  if (sel_.context >= 0 && sel_.context < ctxs.size() && ctxs[sel_.context].has_program) return sel_.context;
  return session_->kernel_context(sel_.program_key);
}

void SelectionModel::select_context(int context) {
  const auto& ctxs = session_->contexts();
  if (context < 0 || context >= ctxs.size()) return set({});
  Selection s;
  select_context_quiet(context, &s);
  set(s);
}

void SelectionModel::select_context_quiet(int context, Selection* out) const {
  const auto& ctxs = session_->contexts();
  Selection s;
  s.context = context;
  const auto& c = ctxs[context];
  if (c.has_program) {
    s.program_key = c.program.program_key;
    // its first call (one that ran this context's program: the same key under other opts is another context's)
    if (const QList<int> calls = session_->calls_of_context(context); !calls.isEmpty()) s.call = calls.front();
  }
  *out = s;
}

void SelectionModel::select_pass(int context, int pass) {
  const auto& ctxs = session_->contexts();
  if (context < 0 || context >= ctxs.size()) return set({});
  Selection s = sel_;
  if (s.context != context) select_context_quiet(context, &s);  // one change, one signal
  s.pass = pass >= 0 && pass < ctxs[context].passes.size() ? pass : -1;
  set(s);
}

void SelectionModel::select_node(int node) {
  Selection s = sel_;
  s.node = node;
  if (const int line = source_line_of(s.context, node); line > 0) s.source_line = line;
  set(s);
}

void SelectionModel::select_source_line(int line) {
  Selection s = sel_;
  s.source_line = line;
  const auto& ctxs = session_->contexts();
  if (s.context >= 0 && s.context < ctxs.size() && ctxs[s.context].has_program) {
    for (const auto& [l, uop] : ctxs[s.context].program.lines)
      if (l == line) {
        s.node = uop;
        if (const int pass = output_pass(s.context); pass >= 0) s.pass = pass;
        break;
      }
  }
  set(s);
}

int SelectionModel::output_pass(int context) const {
  const auto& ctxs = session_->contexts();
  if (context < 0 || context >= ctxs.size()) return -1;
  const auto& passes = ctxs[context].passes;
  for (int p = int(passes.size()) - 1; p >= 0; --p)
    if (passes[p].name == QLatin1String("View Output AST")) return p;
  return -1;
}

const QHash<int, int>& SelectionModel::lines_of(int context) const {
  auto it = line_of_node_.find(context);
  if (it != line_of_node_.end()) return *it;
  QHash<int, int>& out = line_of_node_[context];
  const auto& ctxs = session_->contexts();
  if (context < 0 || context >= ctxs.size() || !ctxs[context].has_program) return out;
  const auto& lines = ctxs[context].program.lines;
  QSet<int> own;  // uops a line of their own renders
  for (const auto& [l, uop] : lines) {
    own.insert(uop);
    if (!out.contains(uop)) out.insert(uop, l);
  }
  // an expression inlined into a line (an ALU op used once, a constant, an index) belongs to the first line, in source
  // order, that uses it without a line of its own in between
  for (const auto& [l, uop] : lines) {
    QList<int> stack;
    if (const Uop* u = session_->uop(uop)) stack = u->src;
    while (!stack.isEmpty()) {
      const int id = stack.takeLast();
      if (own.contains(id) || out.contains(id)) continue;
      out.insert(id, l);
      if (const Uop* u = session_->uop(id)) stack += u->src;
    }
  }
  return out;
}

int SelectionModel::source_line_of(int context, int node) const {
  if (node < 0) return -1;
  return lines_of(context).value(node, -1);
}

}  // namespace tsv
