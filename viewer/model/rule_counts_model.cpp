#include "viewer/model/rule_counts_model.h"

namespace tsv {

RuleCountsModel::RuleCountsModel(Session* session, QObject* parent) : QAbstractTableModel(parent), session_(session) {
  connect(session_, &Session::loaded, this, [this] {
    context_ = -1;
    rebuild();
  });
  rebuild();
}

void RuleCountsModel::rebuild() {
  beginResetModel();
  rows_.clear();
  by_key_.clear();
  unlisted_ = 0;
  const auto& contexts = session_->contexts();
  for (int c = 0; c < contexts.size(); ++c)
    for (const Pass& p : contexts[c].passes) {
      unlisted_ += std::max<qint64>(0, qint64(p.match_count) - p.matches.size());
      for (const Match& m : p.matches) {
        const QString k = key(m.rule, m.loc);
        auto it = by_key_.constFind(k);
        int r;
        if (it == by_key_.constEnd()) {
          r = rows_.size();
          by_key_.insert(k, r);
          rows_.push_back({m.rule, m.loc});
        } else {
          r = *it;
        }
        ++rows_[r].run;
        if (c == context_) ++rows_[r].context;
      }
    }
  endResetModel();
}

void RuleCountsModel::set_context(int context) {
  if (context < 0 || context >= session_->contexts().size()) context = -1;
  if (context == context_) return;
  context_ = context;
  for (Row& r : rows_) r.context = 0;
  if (context_ >= 0)
    for (const Pass& p : session_->contexts()[context_].passes)
      for (const Match& m : p.matches) ++rows_[by_key_.value(key(m.rule, m.loc))].context;
  if (!rows_.isEmpty()) emit dataChanged(index(0, kContext), index(rows_.size() - 1, kContext));
  emit headerDataChanged(Qt::Horizontal, kContext, kContext);
}

int RuleCountsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : rows_.size(); }
int RuleCountsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant RuleCountsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const Row& r = rows_[index.row()];
  if (role == kKeyRole) return key(r.name, r.loc);
  if (role == Qt::DisplayRole || role == kSortRole) {
    switch (index.column()) {
      case kRule: return r.name;
      case kLocation: return r.loc;
      case kRun: return r.run;
      case kContext: return role == Qt::DisplayRole && r.context == 0 ? QVariant(QString()) : QVariant(r.context);
    }
  }
  if (role == Qt::ToolTipRole)
    return tr("%1 at %2: %n hit(s) in the run", "", r.run).arg(r.name, r.loc) +
           (context_ >= 0 ? tr(", %n in the selected context", "", r.context) : QString());
  if (role == Qt::TextAlignmentRole && (index.column() == kRun || index.column() == kContext))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant RuleCountsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kRun: return tr("Hits over the whole run: every context's recorded matches");
      case kContext: return tr("Hits in the selected context");
    }
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kRule: return tr("Rule");
    case kLocation: return tr("Location");
    case kRun: return tr("Run");
    case kContext: return tr("Context");
  }
  return {};
}

}  // namespace tsv
