#include "viewer/model/selection_model.h"

#include "viewer/model/session.h"

namespace tsv {

SelectionModel::SelectionModel(Session* session, QObject* parent) : QObject(parent), session_(session) {
  connect(session, &Session::loaded, this, &SelectionModel::clear);
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
  s.context = session_->kernel_context(s.program_key);
  if (s.context < 0) s.context = session_->schedule_context(calls[call].schedule_index);
  set(s);
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
    auto calls = session_->calls_of(s.program_key);
    if (!calls.isEmpty()) s.call = calls.front();
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
  set(s);
}

void SelectionModel::select_source_line(int line) {
  Selection s = sel_;
  s.source_line = line;
  set(s);
}

}  // namespace tsv
