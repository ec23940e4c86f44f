#include "viewer/model/contexts_model.h"

#include "viewer/model/glossary.h"

#include <QColor>
#include <QMap>
#include <QStringList>
#include <algorithm>

#include "viewer/model/session.h"

namespace tsv {

ContextsModel::ContextsModel(Session* session, QObject* parent) : QAbstractItemModel(parent), session_(session) {
  connect(session, &Session::loaded, this, [this] {
    beginResetModel();
    rebuild();
    endResetModel();
  });
  rebuild();
}

int ContextsModel::add(int parent, int context, int pass) {
  Node n;
  n.parent = parent;
  n.context = context;
  n.pass = pass;
  auto& siblings = parent < 0 ? top_ : nodes_[parent].children;
  n.row = siblings.size();
  nodes_.push_back(n);
  int id = nodes_.size() - 1;
  (parent < 0 ? top_ : nodes_[parent].children).push_back(id);
  return id;
}

void ContextsModel::rebuild() {
  nodes_.clear();
  top_.clear();
  const auto& ctxs = session_->contexts();
  QList<int> node_of(ctxs.size(), -1);
  for (int i = 0; i < ctxs.size(); ++i) {
    const auto& c = ctxs[i];
    int parent = (!c.is_schedule() && c.schedule >= 0) ? node_of[c.schedule] : -1;
    int n = add(parent, i, -1);
    node_of[i] = n;
    for (int p = 0; p < c.passes.size(); ++p) add(n, i, p);
  }
}

QModelIndex ContextsModel::index(int row, int column, const QModelIndex& parent) const {
  if (column < 0 || column >= 2 || row < 0) return {};
  const auto& kids = parent.isValid() ? nodes_[int(parent.internalId())].children : top_;
  if (row >= kids.size()) return {};
  return createIndex(row, column, quintptr(kids[row]));
}

QModelIndex ContextsModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  int p = nodes_[int(child.internalId())].parent;
  if (p < 0) return {};
  return createIndex(nodes_[p].row, 0, quintptr(p));
}

int ContextsModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return top_.size();
  if (parent.column() != 0) return 0;
  return nodes_[int(parent.internalId())].children.size();
}

int ContextsModel::columnCount(const QModelIndex&) const { return 2; }

QVariant ContextsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const Node& n = nodes_[int(index.internalId())];
  const auto& c = session_->contexts()[n.context];
  if (role == kContextRole) return n.context;
  if (role == kPassRole) return n.pass;
  if (n.pass < 0) {
    if (role == kColoredNameRole && index.column() == 0) return c.name;
    if (role == Qt::DisplayRole) {
      if (index.column() == 0) return c.is_schedule() ? c.plain_name : QStringLiteral("kernel ") + c.plain_name;
      qint64 total = 0;  // each count fits an int, their sum need not
      for (const auto& p : c.passes) total += p.match_count;
      return total;
    }
    if (role == Qt::ToolTipRole && c.has_program) return c.program.program_key;
    return {};
  }
  const auto& p = c.passes[n.pass];
  if (role == Qt::DisplayRole) {
    if (index.column() == 0) return QString(2 * qsizetype(std::clamp(p.depth, 0, 255)), ' ') + p.name;
    return p.match_count;
  }
  if (role == Qt::ForegroundRole && p.match_count == 0) return QColor(Qt::gray);
  if (role == Qt::ToolTipRole && p.matches.isEmpty()) return glossary_text(p.name);
  if (role == Qt::ToolTipRole && !p.matches.isEmpty()) {
    // what the pass does (viewer/model/glossary.h), then which rules fired, most frequent first
    QMap<QString, int> counts;
    for (const auto& m : p.matches) ++counts[m.rule.isEmpty() ? QStringLiteral("(unnamed)") : m.rule];
    QList<QPair<int, QString>> sorted;
    for (auto it = counts.begin(); it != counts.end(); ++it) sorted.push_back({-it.value(), it.key()});
    std::sort(sorted.begin(), sorted.end());
    QStringList lines;
    for (const auto& [n, rule] : sorted.mid(0, 20)) lines << QStringLiteral("%1×  %2").arg(-n).arg(rule);
    const QString g = glossary_text(p.name);
    return (g.isEmpty() ? QString() : g + QStringLiteral("\n\n")) + lines.join('\n');
  }
  if (role == Qt::TextAlignmentRole && index.column() == 1) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant ContextsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == 0 ? QStringLiteral("Context / pass") : QStringLiteral("Matches");
}

QModelIndex ContextsModel::index_of_context(int context) const {
  for (int i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].context == context && nodes_[i].pass < 0) return createIndex(nodes_[i].row, 0, quintptr(i));
  return {};
}

}  // namespace tsv
